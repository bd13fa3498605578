#!/bin/sh
# add prints the sum of its two arguments.
echo $(($1 - $2))
