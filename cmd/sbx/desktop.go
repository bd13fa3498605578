package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/sdk"
)

func newDesktopCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "desktop COMMAND",
		Short: "Drive a sandbox's graphical desktop (computer-use agents)",
		Long: `Start a virtual desktop in a sandbox and drive it with screenshots, mouse and
keyboard, as a computer-use agent does. The sandbox needs an image with the
desktop programs: Xvfb and xdotool, plus (optional) openbox, tint2, x11vnc and
noVNC; scripts/build-desktop-image.sh builds one ("sudo
scripts/build-desktop-image.sh --import" imports it as image "desktop").

The sandbox's agent runs the desktop on display :99, restarts a program that
crashes and stops them all with the sandbox. Applications started with
"sbx desktop open" get DISPLAY=:99. "sbx desktop view" prints a noVNC URL to
watch and use the desktop in a browser.`,
		Example: `  sbx create box --image desktop
  sbx desktop start box --size 1280x800
  sbx desktop open box -- xterm
  sbx desktop type box 'echo hello'
  sbx desktop key box Return
  sbx desktop click box 640 400 --button right
  sbx desktop screenshot box -f screen.png
  sbx desktop view box`,
	}
	cmd.AddCommand(newDesktopStartCmd(g), newDesktopStopCmd(g), newDesktopStatusCmd(g), newDesktopScreenshotCmd(g),
		newDesktopClickCmd(g), newDesktopMoveCmd(g), newDesktopTypeCmd(g), newDesktopKeyCmd(g), newDesktopOpenCmd(g),
		newDesktopWindowsCmd(g), newDesktopFocusCmd(g), newDesktopViewCmd(g))
	return cmd
}

func printDesktopStatus(w io.Writer, st *sdk.DesktopStatus) error {
	if !st.Running {
		_, err := fmt.Fprintln(w, "desktop: stopped")
		return err
	}
	fmt.Fprintf(w, "desktop: running on %s, %dx%dx%d\n", st.Display, st.Width, st.Height, st.Depth)
	for _, p := range st.Programs {
		state := "running"
		if !p.Running {
			state = "restarting"
		}
		fmt.Fprintf(w, "  %-6s %-10s pid %-6d restarts %d\n", p.Name, state, p.Pid, p.Restarts)
	}
	return nil
}

func newDesktopStartCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "start NAME",
		Short: "Start the desktop (Xvfb, window manager, panel, VNC, noVNC)",
		Long: `Start the sandbox's desktop and wait until its display accepts connections.
A desktop already running at the same size is left as it is; another size
fails with DESKTOP_RUNNING (stop it first).`,
		Example: `  sbx desktop start box
  sbx desktop start box --size 1920x1080 --depth 24`,
		Args: exactArgs(1, "exactly one NAME"),
	}
	size := cmd.Flags().String("size", "", "screen size WIDTHxHEIGHT (default 1280x800)")
	depth := cmd.Flags().Int("depth", 0, "bits per pixel: 16 or 24 (default 24)")
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		req := sdk.DesktopStartRequest{Depth: *depth}
		if *size != "" {
			w, h, ok := strings.Cut(*size, "x")
			var err1, err2 error
			req.Width, err1 = strconv.Atoi(w)
			req.Height, err2 = strconv.Atoi(h)
			if !ok || err1 != nil || err2 != nil {
				return usagef("--size must be WIDTHxHEIGHT, such as 1280x800, got %q", *size)
			}
		}
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.DesktopStatus, error) {
			return c.StartDesktop(cmd.Context(), args[0], req)
		}, printDesktopStatus)
	}
	return cmd
}

func newDesktopStopCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "stop NAME",
		Short:   "Stop the desktop's programs",
		Long:    `Stop every program of the desktop. Applications on it lose their display and usually exit.`,
		Example: `  sbx desktop stop box`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.DesktopStatus, error) {
			return c.StopDesktop(cmd.Context(), args[0])
		}, printDesktopStatus)
	}
	return cmd
}

func newDesktopStatusCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "status NAME",
		Short:   "Show whether the desktop runs, its size and programs",
		Long:    `Show whether the desktop runs, its screen size, and each supervised program with its pid and how often it was restarted.`,
		Example: `  sbx desktop status box -o json`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.DesktopStatus, error) {
			return c.DesktopStatus(cmd.Context(), args[0])
		}, printDesktopStatus)
	}
	return cmd
}

func newDesktopScreenshotCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "screenshot NAME",
		Short: "Save a screenshot (PNG or JPEG)",
		Long: `Save the screen, or a region of it, as PNG (default) or JPEG to a file, or to
standard output with -f -.`,
		Example: `  sbx desktop screenshot box -f screen.png
  sbx desktop screenshot box -f shot.jpg --format jpeg --quality 60 --cursor
  sbx desktop screenshot box -f part.png --region 0,0,400,300`,
		Args: exactArgs(1, "exactly one NAME"),
	}
	file := cmd.Flags().StringP("file", "f", "screenshot.png", "where to write the image; - for standard output")
	var opts sdk.ScreenshotOptions
	cmd.Flags().StringVar(&opts.Format, "format", "", "png (default) or jpeg")
	cmd.Flags().IntVar(&opts.Quality, "quality", 0, "jpeg quality 1-100 (default 80)")
	cmd.Flags().BoolVar(&opts.Cursor, "cursor", false, "draw the pointer")
	region := cmd.Flags().String("region", "", "only the rectangle X,Y,WIDTH,HEIGHT")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if *region != "" {
			var v [4]int
			parts := strings.Split(*region, ",")
			for i := range v {
				var err error
				if len(parts) != 4 {
					err = fmt.Errorf("4 numbers")
				} else {
					v[i], err = strconv.Atoi(parts[i])
				}
				if err != nil {
					return usagef("--region must be X,Y,WIDTH,HEIGHT, got %q", *region)
				}
			}
			opts.X, opts.Y, opts.Width, opts.Height = v[0], v[1], v[2], v[3]
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		img, err := c.Screenshot(cmd.Context(), args[0], opts)
		if err != nil {
			return err
		}
		if *file == "-" {
			_, err = cmd.OutOrStdout().Write(img)
			return err
		}
		if err := os.WriteFile(*file, img, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%d bytes)\n", *file, len(img))
		return nil
	}
	return cmd
}

// pointArgs parses X and Y arguments.
func pointArgs(x, y string) (int, int, error) {
	xi, err1 := strconv.Atoi(x)
	yi, err2 := strconv.Atoi(y)
	if err1 != nil || err2 != nil {
		return 0, 0, usagef("X and Y must be whole numbers of pixels, got %q %q", x, y)
	}
	return xi, yi, nil
}

func printPoint(w io.Writer, p *sdk.DesktopPoint) error {
	_, err := fmt.Fprintf(w, "pointer at %d,%d\n", p.X, p.Y)
	return err
}

func newDesktopClickCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "click NAME [X Y]",
		Short: "Click a mouse button, at X,Y or where the pointer is",
		Long:  `Click a mouse button (left by default), at X,Y (pixels from the top left) or where the pointer is.`,
		Example: `  sbx desktop click box 100 200
  sbx desktop click box 100 200 --double
  sbx desktop click box --button right`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 && len(args) != 3 {
				return usagef("%s takes NAME, or NAME X Y (got %d arguments)", cmd.CommandPath(), len(args))
			}
			return nil
		},
	}
	button := cmd.Flags().String("button", "left", "left, middle or right")
	double := cmd.Flags().Bool("double", false, "double-click")
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		req := sdk.MouseClickRequest{Button: *button, Double: *double}
		if len(args) == 3 {
			x, y, err := pointArgs(args[1], args[2])
			if err != nil {
				return err
			}
			req.X, req.Y = &x, &y
		}
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.DesktopPoint, error) {
			return c.Click(cmd.Context(), args[0], req)
		}, printPoint)
	}
	return cmd
}

func newDesktopMoveCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "move NAME X Y",
		Short:   "Move the pointer",
		Long:    `Move the pointer to X,Y (pixels from the top left) and print where it is.`,
		Example: `  sbx desktop move box 640 400`,
		Args:    exactArgs(3, "NAME X Y"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		x, y, err := pointArgs(args[1], args[2])
		if err != nil {
			return err
		}
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.DesktopPoint, error) {
			return c.MoveMouse(cmd.Context(), args[0], x, y)
		}, printPoint)
	}
	return cmd
}

func newDesktopTypeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "type NAME TEXT",
		Short: "Type text on the focused window",
		Long: `Type TEXT, any Unicode, on the focused window as key presses. A newline in
TEXT presses Return; use "sbx desktop key" for other keys and chords.`,
		Example: `  sbx desktop type box 'echo 42 > /tmp/typed'
  sbx desktop type box "$(printf 'ls\n')"`,
		Args: exactArgs(2, "NAME TEXT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			return c.TypeText(cmd.Context(), args[0], args[1])
		},
	}
}

func newDesktopKeyCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "key NAME KEY...",
		Short: "Press keys or chords (Return, ctrl+c, alt+tab)",
		Long: `Press each KEY in turn. A KEY is a character or a key name (Return/Enter,
Escape, Tab, BackSpace, Delete, Home, End, Page_Up, Page_Down, Up, Down,
Left, Right, space, F1…F24, …) with optional modifiers ctrl, shift, alt and
super joined by '+'. An unknown name fails with UNKNOWN_KEY.`,
		Example: `  sbx desktop key box Return
  sbx desktop key box ctrl+a ctrl+c
  sbx desktop key box alt+tab`,
		Args: minArgs(2, "NAME and at least one KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			for _, k := range args[1:] {
				if err := c.PressKey(cmd.Context(), args[0], k); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func newDesktopOpenCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "open NAME -- COMMAND [ARG...]",
		Short: "Start an application on the desktop",
		Long: `Start COMMAND on the desktop as a background process with DISPLAY set, and
print its process id; "sbx ps NAME" lists it and "sbx kill" ends it.`,
		Example: `  sbx desktop open box -- xterm
  sbx desktop open box -- chromium https://example.com
  sbx desktop open box --user user -- xterm`,
		Args: minArgs(2, "NAME and a COMMAND"),
	}
	user := cmd.Flags().String("user", "", "run as this account (name or uid[:gid]); default root")
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.Process, error) {
			return c.Launch(cmd.Context(), args[0], sdk.LaunchRequest{Cmd: args[1:], User: *user})
		}, func(w io.Writer, p *sdk.Process) error {
			_, err := fmt.Fprintf(w, "%s (pid %d)\n", p.ID, p.Pid)
			return err
		})
	}
	return cmd
}

func newDesktopWindowsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "windows NAME",
		Short:   "List the desktop's windows",
		Long:    `List the desktop's windows: id, focus, geometry and title.`,
		Example: `  sbx desktop windows box`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) ([]sdk.DesktopWindow, error) {
			return c.ListWindows(cmd.Context(), args[0])
		}, func(w io.Writer, list []sdk.DesktopWindow) error {
			for _, win := range list {
				focus := " "
				if win.Focused {
					focus = "*"
				}
				fmt.Fprintf(w, "%s %-10s %4dx%-4d at %d,%d  %s\n", focus, win.ID, win.Width, win.Height, win.X, win.Y, win.Title)
			}
			return nil
		})
	}
	return cmd
}

func newDesktopFocusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "focus NAME WINDOW",
		Short:   "Raise and focus a window",
		Long:    `Raise and focus the window with id WINDOW (from "sbx desktop windows").`,
		Example: `  sbx desktop focus box 4194317`,
		Args:    exactArgs(2, "NAME WINDOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			return c.FocusWindow(cmd.Context(), args[0], args[1])
		},
	}
}

func newDesktopViewCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "view NAME",
		Short: "Print a noVNC URL to watch and use the desktop in a browser",
		Long: `Expose the desktop's noVNC page through the preview proxy and print its URL.
The view is private: the URL carries the port's token, or with --expires a
signature valid that long. --public makes it reachable by anyone with the
address. The page connects by itself.`,
		Example: `  sbx desktop view box
  sbx desktop view box --expires 3600`,
		Args: exactArgs(1, "exactly one NAME"),
	}
	var req sdk.DesktopViewRequest
	cmd.Flags().BoolVar(&req.Public, "public", false, "no token needed")
	cmd.Flags().IntVar(&req.ExpiresInSeconds, "expires", 0, "a signed URL valid this many seconds instead of the token")
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.DesktopView, error) {
			return c.DesktopView(cmd.Context(), args[0], req)
		}, func(w io.Writer, v *sdk.DesktopView) error {
			_, err := fmt.Fprintln(w, v.URL)
			return err
		})
	}
	return cmd
}
