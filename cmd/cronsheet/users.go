package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"cronsheet/api/authapi"
	"cronsheet/auth"
	"cronsheet/config"
	"cronsheet/server"
	"cronsheet/store"
	"cronsheet/task"
)

// usersUsage is the help of `cronsheet user` and `cronsheet token`.
const usersUsage = `usage:
  cronsheet user add NAME --role viewer|editor|admin [-config f] [--no-password]
      the password is read from the terminal (asked twice) or from the first
      line of stdin, never from the command line
  cronsheet user passwd NAME [-config f]
  cronsheet user role NAME viewer|editor|admin [-config f]
  cronsheet user list [-config f]
  cronsheet user delete NAME [-config f]
  cronsheet token create --user NAME --name TOKEN_NAME --role ROLE [--expires 720h] [-config f]
      prints the token once; only its hash is stored
  cronsheet token list [--user NAME] [-config f]
  cronsheet token revoke ID [-config f]
`

// cliIO is what a user or token command reads and writes.
type cliIO struct {
	in       io.Reader
	out, err io.Writer
	// terminal is set when in is a terminal: passwords are asked without
	// echo.
	terminal bool
}

// usersCmd runs `cronsheet user …` or `cronsheet token …` and returns the
// exit code.
func usersCmd(cmd string, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cio := cliIO{in: os.Stdin, out: os.Stdout, err: os.Stderr, terminal: term.IsTerminal(int(os.Stdin.Fd()))}
	return runUsersCmd(ctx, cmd, args, cio)
}

// cmdFlags are the flags of every user and token subcommand.
type cmdFlags struct {
	config, role, user, name, expires string
	noPassword                        bool
	args                              []string
}

// parseCmd reads the flags, which may come before or after the positional
// arguments (`user add alice --role admin`).
func parseCmd(name string, args []string, stderr io.Writer) (cmdFlags, error) {
	var f cmdFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.config, "config", "config.yaml", "path to the configuration file")
	fs.StringVar(&f.role, "role", "", "role: viewer, editor or admin")
	fs.StringVar(&f.user, "user", "", "the token's user")
	fs.StringVar(&f.name, "name", "", "the token's name")
	fs.StringVar(&f.expires, "expires", "", "token lifetime: a duration such as 720h, or a number of seconds (default: never)")
	fs.BoolVar(&f.noPassword, "no-password", false, "a service account: no password, tokens only")
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return f, err
		}
		args = fs.Args()
		if len(args) > 0 {
			f.args = append(f.args, args[0])
			args = args[1:]
		}
	}
	return f, nil
}

func runUsersCmd(ctx context.Context, cmd string, args []string, cio cliIO) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(cio.err, usersUsage)
		return 2
	}
	sub := args[0]
	f, err := parseCmd("cronsheet "+cmd+" "+sub, args[1:], cio.err)
	if err != nil {
		return 2
	}
	cfg, err := config.Load(f.config, os.Getenv)
	if err != nil {
		fmt.Fprintln(cio.err, "cronsheet:", err)
		return 2
	}
	users, closeStore, err := server.OpenUsers(ctx, cfg.Store)
	if err != nil {
		fmt.Fprintln(cio.err, "cronsheet:", err)
		return 1
	}
	defer closeStore()
	run := map[string]func(context.Context, store.Users, cmdFlags, cliIO) error{
		"user add": userAdd, "user passwd": userPasswd, "user role": userRole, "user list": userList,
		"user delete": userDelete, "token create": tokenCreate, "token list": tokenList, "token revoke": tokenRevoke,
	}[cmd+" "+sub]
	if run == nil {
		fmt.Fprintf(cio.err, "cronsheet %s: unknown subcommand %q\n%s", cmd, sub, usersUsage)
		return 2
	}
	if err := run(ctx, users, f, cio); err != nil {
		fmt.Fprintf(cio.err, "cronsheet %s %s: %v\n", cmd, sub, err)
		return 1
	}
	return 0
}

// oneArg returns the single positional argument, named what.
func oneArg(f cmdFlags, what string) (string, error) {
	if len(f.args) != 1 {
		return "", fmt.Errorf("want exactly one %s", what)
	}
	return f.args[0], nil
}

func userAdd(ctx context.Context, users store.Users, f cmdFlags, cio cliIO) error {
	name, err := oneArg(f, "user name")
	if err != nil {
		return err
	}
	u := &store.User{Name: name, Role: task.Role(f.role)}
	if err := u.Validate(); err != nil {
		return err
	}
	if !f.noPassword {
		if u.PasswordHash, err = readPassword(cio, name); err != nil {
			return err
		}
	}
	if err := users.AddUser(ctx, u); err != nil {
		return err
	}
	fmt.Fprintf(cio.out, "user %s added with role %s\n", u.Name, u.Role)
	return nil
}

func userPasswd(ctx context.Context, users store.Users, f cmdFlags, cio cliIO) error {
	name, err := oneArg(f, "user name")
	if err != nil {
		return err
	}
	hash, err := readPassword(cio, name)
	if err != nil {
		return err
	}
	if _, err := users.UpdateUser(ctx, store.UpdateUserParams{Name: name, PasswordHash: &hash}); err != nil {
		return err
	}
	fmt.Fprintf(cio.out, "password of %s changed\n", name)
	return nil
}

func userRole(ctx context.Context, users store.Users, f cmdFlags, cio cliIO) error {
	if len(f.args) != 2 {
		return errors.New("want a user name and a role")
	}
	role := task.Role(f.args[1])
	u, err := users.UpdateUser(ctx, store.UpdateUserParams{Name: f.args[0], Role: &role})
	if err != nil {
		return err
	}
	fmt.Fprintf(cio.out, "user %s now has role %s\n", u.Name, u.Role)
	return nil
}

func userList(ctx context.Context, users store.Users, _ cmdFlags, cio cliIO) error {
	us, err := users.ListUsers(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(cio.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tROLE\tPASSWORD\tDISABLED\tCREATED")
	for _, u := range us {
		fmt.Fprintf(tw, "%s\t%s\t%t\t%t\t%s\n", u.Name, u.Role, u.PasswordHash != "", u.Disabled, u.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func userDelete(ctx context.Context, users store.Users, f cmdFlags, cio cliIO) error {
	name, err := oneArg(f, "user name")
	if err != nil {
		return err
	}
	if err := users.DeleteUser(ctx, name); err != nil {
		return err
	}
	fmt.Fprintf(cio.out, "user %s and their sessions and tokens deleted\n", name)
	return nil
}

func tokenCreate(ctx context.Context, users store.Users, f cmdFlags, cio cliIO) error {
	cred, value, err := authapi.NewToken(ctx, users, authapi.TokenParams{User: f.user, Name: f.name,
		Role: task.Role(f.role), ExpiresIn: f.expires, Now: time.Now()})
	if err != nil {
		return err
	}
	fmt.Fprintf(cio.err, "token %s (id %s) of %s with role %s; it is shown only now:\n", cred.Name, cred.ID, cred.User, cred.Role)
	fmt.Fprintln(cio.out, value)
	return nil
}

func tokenList(ctx context.Context, users store.Users, f cmdFlags, cio cliIO) error {
	ts, err := users.ListCredentials(ctx, store.ListCredentialsParams{User: f.user, Kind: store.KindToken})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(cio.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSER\tNAME\tROLE\tCREATED\tEXPIRES")
	for _, c := range ts {
		exp := "never"
		if !c.ExpiresAt.IsZero() {
			exp = c.ExpiresAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.User, c.Name, c.Role, c.CreatedAt.Format(time.RFC3339), exp)
	}
	return tw.Flush()
}

func tokenRevoke(ctx context.Context, users store.Users, f cmdFlags, cio cliIO) error {
	id, err := oneArg(f, "token id")
	if err != nil {
		return err
	}
	c, err := users.GetCredential(ctx, id)
	if err == nil && c.Kind != store.KindToken {
		err = fmt.Errorf("%s is not a token", id)
	}
	if err == nil {
		err = users.DeleteCredential(ctx, id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cio.out, "token %s (%s of %s) revoked\n", id, c.Name, c.User)
	return nil
}

// readPassword asks for a password twice on a terminal (without echo), or
// reads the first line of a pipe, and returns its hash.
func readPassword(cio cliIO, name string) (string, error) {
	var pw string
	if cio.terminal {
		fd := int(os.Stdin.Fd())
		fmt.Fprintf(cio.err, "password for %s: ", name)
		a, err := term.ReadPassword(fd)
		fmt.Fprintln(cio.err)
		if err != nil {
			return "", fmt.Errorf("read password: %w", err)
		}
		fmt.Fprint(cio.err, "again: ")
		b, err := term.ReadPassword(fd)
		fmt.Fprintln(cio.err)
		if err != nil {
			return "", fmt.Errorf("read password: %w", err)
		}
		if string(a) != string(b) {
			return "", errors.New("the passwords differ")
		}
		pw = string(a)
	} else {
		line, err := bufio.NewReader(cio.in).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read password from stdin: %w", err)
		}
		pw = strings.TrimRight(line, "\r\n")
	}
	return auth.HashPassword(pw)
}
