#!/bin/sh
# The tests of add.sh: exit 0 when they pass.
got=$(sh add.sh 2 3)
if [ "$got" != 5 ]; then
	echo "FAIL: sh add.sh 2 3 printed $got, want 5"
	exit 1
fi
echo "ok: add.sh"
