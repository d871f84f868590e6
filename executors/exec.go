package executors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"cronsheet/task"
)

// DefaultExecPath is the PATH of commands whose config Env sets none.
const DefaultExecPath = "/usr/local/bin:/usr/bin:/bin"

// execWaitDelay bounds how long output is still read once a command has
// exited or been killed: a process that left the group but holds the
// output pipe cannot hold the delivery up longer than this.
const execWaitDelay = 5 * time.Second

// ExecConfig configures an Exec executor.
type ExecConfig struct {
	// Commands are the commands targets may run, by name. Only these run.
	Commands map[string]ExecCommand
}

// ExecCommand is one allow-listed command. Params reach it only through
// Args, one argv element per Args element, never through a shell.
type ExecCommand struct {
	// Path is the absolute path of the executable; never templated.
	// Required.
	Path string
	// Args follow Path in argv; each is a template (see task.Expand) and
	// stays exactly one argv element whatever its params contain.
	Args []string
	// Dir is the working directory, absolute. Default: cronsheet's own.
	Dir string
	// Env entries ("KEY=value") are added to the command's environment,
	// which otherwise holds only PATH (default DefaultExecPath; an Env
	// PATH replaces it) and the CRONSHEET_TRIGGER_ID, CRONSHEET_TASK_ID,
	// CRONSHEET_SLOT and CRONSHEET_ATTEMPT of the delivery. Keys starting
	// with CRONSHEET_ are reserved.
	Env []string
}

// Exec runs allow-listed commands (task.ExecTarget names one). Each runs in
// its own process group, with stdin from /dev/null and stdout and stderr
// captured together, the first task.MaxOutput bytes kept. When the
// delivery's context ends (the task's ttl) the whole group is killed, and
// whatever the command leaves running in its group when it exits is killed
// too (on Linux; other Unix systems kill leftovers only at the deadline).
// Unix only.
type Exec struct {
	logger   *slog.Logger
	commands map[string]ExecCommand
}

// NewExec validates cfg and returns an Exec executor. logger may be nil.
// Each command needs a non-empty name, an absolute Path to an executable
// file, an absolute existing Dir when set, well-formed Args templates and
// "KEY=value" Env entries.
func NewExec(logger *slog.Logger, cfg ExecConfig) (*Exec, error) {
	cmds := make(map[string]ExecCommand, len(cfg.Commands))
	for name, c := range cfg.Commands {
		if err := validCommand(name, c); err != nil {
			return nil, fmt.Errorf("exec config: command %q: %w", name, err)
		}
		c.Args = append([]string(nil), c.Args...)
		c.Env = envWithPath(c.Env)
		cmds[name] = c
	}
	return &Exec{logger: componentLogger(logger, "executors.exec"), commands: cmds}, nil
}

// validCommand checks one configured command.
func validCommand(name string, c ExecCommand) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("empty name")
	}
	if !filepath.IsAbs(c.Path) {
		return fmt.Errorf("path %q is not absolute", c.Path)
	}
	fi, err := os.Stat(c.Path)
	if err != nil {
		return fmt.Errorf("path: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("path %q is not an executable file", c.Path)
	}
	if c.Dir != "" {
		if !filepath.IsAbs(c.Dir) {
			return fmt.Errorf("dir %q is not absolute", c.Dir)
		}
		if fi, err := os.Stat(c.Dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("dir %q is not a directory", c.Dir)
		}
	}
	for i, a := range c.Args {
		if err := task.CheckTemplate(a); err != nil {
			return fmt.Errorf("args[%d]: %w", i, err)
		}
	}
	for _, kv := range c.Env {
		k, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok || k == "" || strings.ContainsAny(kv, "\x00"):
			return fmt.Errorf("env entry %q, want KEY=value", kv)
		case strings.HasPrefix(k, "CRONSHEET_"):
			return fmt.Errorf("env entry %q: CRONSHEET_ variables are set by cronsheet", kv)
		}
	}
	return nil
}

// envWithPath returns env with PATH=DefaultExecPath first unless env sets
// PATH itself.
func envWithPath(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			return append([]string(nil), env...)
		}
	}
	return append([]string{"PATH=" + DefaultExecPath}, env...)
}

// Has reports whether name is a configured command, to validate an exec
// target when it is saved.
func (e *Exec) Has(name string) bool {
	_, ok := e.commands[name]
	return ok
}

// Execute runs the command d.Target.Exec names. Exit status 0 is success,
// with the captured output. An unlisted command, an arg template that does
// not expand and a missing executable are task.Permanent; a non-zero exit
// (the error has the code and the output) and a kill at the deadline are
// retryable.
func (e *Exec) Execute(ctx context.Context, d task.Delivery) (string, error) {
	if d.Target == nil || d.Target.Exec == nil {
		return "", task.Permanent(fmt.Errorf("exec delivery without an exec target: %w", task.ErrInvalid))
	}
	name := d.Target.Exec.Command
	c, ok := e.commands[name]
	if !ok {
		return "", task.Permanent(fmt.Errorf("command %q is not listed in config exec.commands: %w", name, task.ErrInvalid))
	}
	vars := d.Vars()
	args := make([]string, len(c.Args))
	for i, tmpl := range c.Args {
		a, err := task.Expand(tmpl, vars)
		if err != nil {
			return "", task.Permanent(fmt.Errorf("command %q args[%d]: %w", name, i, err))
		}
		args[i] = a
	}
	env := append(c.Env[:len(c.Env):len(c.Env)],
		"CRONSHEET_TRIGGER_ID="+d.TriggerID,
		"CRONSHEET_TASK_ID="+d.TaskID,
		"CRONSHEET_SLOT="+vars["slot"],
		"CRONSHEET_ATTEMPT="+strconv.Itoa(d.Attempt))

	out, err := run(ctx, c, args, env)
	if err != nil {
		return out, e.classify(ctx, name, out, err)
	}
	e.logger.DebugContext(ctx, "command done", "task_id", d.TaskID,
		"trigger_id", d.TriggerID, "attempt", d.Attempt, "command", name)
	return out, nil
}

// classify turns a failed run into the executor's error, with the
// captured output after it.
func (e *Exec) classify(ctx context.Context, name, out string, err error) error {
	var exitErr *exec.ExitError
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return task.Permanent(fmt.Errorf("command %q cannot start: %w", name, err))
	case ctx.Err() != nil:
		err = fmt.Errorf("command %q killed with its process group when its context ended: %w", name, context.Cause(ctx))
	case errors.As(err, &exitErr) && exitErr.Exited():
		err = fmt.Errorf("command %q exited with code %d: %w", name, exitErr.ExitCode(), err)
	default:
		err = fmt.Errorf("command %q failed: %w", name, err)
	}
	if out == "" {
		return err
	}
	return fmt.Errorf("%w; output: %s", err, out)
}

// run starts c with args and env in a new process group and waits for it.
// Output goes through a pipe of ours, so the wait ends when the command
// exits even if a background child still holds the pipe. Once the command
// has exited, and before it is reaped (so its pid, the group id, cannot be
// reused yet), the rest of its group is killed; the pipe is then read to
// its end, for at most execWaitDelay more.
func run(ctx context.Context, c ExecCommand, args, env []string) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("output pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, c.Path, args...)
	cmd.Dir = c.Dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var (
		mu     sync.Mutex
		reaped bool
	)
	// Cancel runs when ctx ends; it may race with the reaping below.
	cmd.Cancel = func() error {
		mu.Lock()
		defer mu.Unlock()
		if reaped {
			return os.ErrProcessDone
		}
		return killGroup(cmd.Process.Pid)
	}
	cmd.WaitDelay = execWaitDelay
	err = cmd.Start()
	w.Close() // the child has its copy
	if err != nil {
		return "", err
	}
	buf := &headBuffer{max: task.MaxOutput}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(buf, r) // ends at EOF or at the read deadline
	}()
	if waitExited(cmd.Process.Pid) == nil {
		_ = cmd.Cancel() // what the command left behind in its group
	}
	mu.Lock()
	reaped = true
	mu.Unlock()
	waitErr := cmd.Wait()
	_ = r.SetReadDeadline(time.Now().Add(execWaitDelay))
	<-copied
	return buf.String(), waitErr
}

// killGroup sends SIGKILL to process group pgid; an empty group is fine.
func killGroup(pgid int) error {
	if pgid <= 1 {
		return fmt.Errorf("kill process group %d: not a child's group", pgid)
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	return nil
}

var _ Executor = (*Exec)(nil)
