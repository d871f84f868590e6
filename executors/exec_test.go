package executors_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronsheet/executors"
	"cronsheet/task"
)

// writeScript writes an executable shell script into dir and returns its
// path. The script is the allow-listed program; cronsheet execs it directly
// with its argv, never through a shell of its own.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// newExec returns an Exec executor for cmds.
func newExec(t *testing.T, cmds map[string]executors.ExecCommand) *executors.Exec {
	t.Helper()
	e, err := executors.NewExec(nil, executors.ExecConfig{Commands: cmds})
	if err != nil {
		t.Fatalf("NewExec: %v", err)
	}
	return e
}

func execDelivery(command string, params map[string]string) task.Delivery {
	return task.Delivery{
		TaskID:      "task-7",
		TriggerID:   "trg-99",
		Slot:        time.Date(2026, 3, 7, 8, 30, 0, 0, time.UTC),
		Attempt:     1,
		Channel:     task.ChannelExec,
		TriggerType: task.TriggerManual,
		Params:      params,
		Target: &task.Target{ID: "job", Kind: task.ChannelExec, State: task.TargetRunning,
			Exec: &task.ExecTarget{Command: command}},
	}
}

// argvScript prints its argument count, each argument in brackets, its
// working directory and its environment.
const argvScript = `printf 'argc=%s\n' "$#"
for a in "$@"; do printf '[%s]\n' "$a"; done
printf 'pwd=%s\n' "$(pwd)"
env
`

func TestExecArgvAndEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeScript(t, dir, "argv.sh", argvScript)
	e := newExec(t, map[string]executors.ExecCommand{
		"argv": {
			Path: path,
			Args: []string{"--name={{name}}", "{{evil}}", "fixed", "{{trigger_id}}"},
			Dir:  dir,
			Env:  []string{"FOO=bar baz"},
		},
	})
	evil := `hello world; rm -rf "$HOME" && echo $(id) | sh`
	d := execDelivery("argv", map[string]string{"name": "Ann Lee", "evil": evil})

	out, err := e.Execute(context.Background(), d)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{"argc=4", "[--name=Ann Lee]", "[" + evil + "]", "[fixed]", "[trg-99]", "pwd=" + dir}
	if len(lines) < len(want) {
		t.Fatalf("output = %q, want it to start with %q", out, want)
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("output line %d = %q, want %q", i, lines[i], w)
		}
	}
	env := map[string]string{}
	for _, kv := range lines[len(want):] {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, v := range map[string]string{
		"PATH":                 executors.DefaultExecPath,
		"CRONSHEET_TRIGGER_ID": "trg-99",
		"CRONSHEET_TASK_ID":    "task-7",
		"CRONSHEET_SLOT":       "2026-03-07T08:30:00Z",
		"CRONSHEET_ATTEMPT":    "1",
		"FOO":                  "bar baz",
	} {
		if env[k] != v {
			t.Errorf("env %s = %q, want %q", k, env[k], v)
		}
	}
	// Only what cronsheet set, plus what sh itself exports.
	for k := range env {
		switch k {
		case "PATH", "CRONSHEET_TRIGGER_ID", "CRONSHEET_TASK_ID", "CRONSHEET_SLOT",
			"CRONSHEET_ATTEMPT", "FOO", "PWD", "OLDPWD", "SHLVL", "_":
		default:
			t.Errorf("unexpected env variable %s (cronsheet's environment leaked?)", k)
		}
	}
}

func TestExecPathFromEnv(t *testing.T) {
	t.Parallel()
	path := writeScript(t, t.TempDir(), "path.sh", `printf '%s' "$PATH"`)
	e := newExec(t, map[string]executors.ExecCommand{
		"path": {Path: path, Env: []string{"PATH=/opt/tools/bin:/usr/bin:/bin"}},
	})
	out, err := e.Execute(context.Background(), execDelivery("path", nil))
	if err != nil || out != "/opt/tools/bin:/usr/bin:/bin" {
		t.Errorf("Execute = %q, %v; want the configured PATH", out, err)
	}
}

func TestExecFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := newExec(t, map[string]executors.ExecCommand{
		"fail":    {Path: writeScript(t, dir, "fail.sh", "echo 'something broke' >&2\nexit 3\n")},
		"needs":   {Path: writeScript(t, dir, "needs.sh", "exit 0\n"), Args: []string{"{{missing}}"}},
		"chatter": {Path: writeScript(t, dir, "chatter.sh", "head -c 5000000 /dev/zero | tr '\\0' x\necho\necho end\n")},
	})

	t.Run("NonZeroExitIsRetryable", func(t *testing.T) {
		t.Parallel()
		_, err := e.Execute(context.Background(), execDelivery("fail", nil))
		if err == nil || task.IsPermanent(err) {
			t.Fatalf("err = %v, want retryable", err)
		}
		for _, want := range []string{"exited with code 3", "something broke"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("err = %q, want it to contain %q", err, want)
			}
		}
	})

	t.Run("UnlistedCommandIsPermanent", func(t *testing.T) {
		t.Parallel()
		_, err := e.Execute(context.Background(), execDelivery("/bin/sh", nil))
		want := `command "/bin/sh" is not listed in config exec.commands`
		if !task.IsPermanent(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want permanent %q", err, want)
		}
		if e.Has("/bin/sh") || !e.Has("fail") {
			t.Errorf("Has(/bin/sh), Has(fail) = %v, %v; want false, true", e.Has("/bin/sh"), e.Has("fail"))
		}
	})

	t.Run("ArgTemplateErrorIsPermanent", func(t *testing.T) {
		t.Parallel()
		_, err := e.Execute(context.Background(), execDelivery("needs", nil))
		if !task.IsPermanent(err) || !strings.Contains(err.Error(), "missing") {
			t.Errorf("err = %v, want permanent naming the placeholder", err)
		}
	})

	t.Run("HugeOutputIsCapped", func(t *testing.T) {
		t.Parallel()
		out, err := e.Execute(context.Background(), execDelivery("chatter", nil))
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if len(out) > task.MaxOutput || !strings.HasPrefix(out, "xxxx") || !strings.Contains(out, "truncated: 5000005 bytes in all") {
			t.Errorf("output of %d bytes ends %q, want at most %d bytes, the head, and a truncation note",
				len(out), out[max(0, len(out)-60):], task.MaxOutput)
		}
	})

	t.Run("MissingTarget", func(t *testing.T) {
		t.Parallel()
		d := execDelivery("fail", nil)
		d.Target = nil
		if _, err := e.Execute(context.Background(), d); !task.IsPermanent(err) {
			t.Errorf("err = %v, want permanent", err)
		}
	})
}

// readPIDs reads the pids a script wrote to path, one a line.
func readPIDs(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read pid file: %v", err)
	}
	var pids []int
	for f := range strings.FieldsSeq(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file %q: %v", b, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitGone waits until process pid no longer runs (gone, or a zombie
// waiting for a reaper), failing after a generous minute.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if !processRunning(pid) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL) // don't leave it behind
			t.Fatalf("process %d still running", pid)
		}
	}
}

// processRunning reports whether pid exists and is not a zombie.
func processRunning(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

func TestExecProcessGroup(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc and needs waitid: Linux only")
	}
	dir := t.TempDir()
	// Each script records its own pid and its background child's, then
	// either outlives the deadline or exits at once leaving the child.
	e := newExec(t, map[string]executors.ExecCommand{
		"sleeper": {Path: writeScript(t, dir, "sleeper.sh",
			"sleep 300 &\necho $! > \"$1\"\necho $$ >> \"$1\"\necho started\nsleep 300\n"),
			Args: []string{"{{pidfile}}"}},
		"leaver": {Path: writeScript(t, dir, "leaver.sh",
			"sleep 300 &\necho $! > \"$1\"\necho done\n"),
			Args: []string{"{{pidfile}}"}},
	})

	t.Run("DeadlineKillsTheGroup", func(t *testing.T) {
		t.Parallel()
		pidfile := filepath.Join(dir, "sleeper.pids")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		out, err := e.Execute(ctx, execDelivery("sleeper", map[string]string{"pidfile": pidfile}))
		if err == nil || task.IsPermanent(err) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Execute = %q, %v; want a retryable deadline error", out, err)
		}
		if !strings.Contains(err.Error(), "killed") || !strings.Contains(err.Error(), "started") {
			t.Errorf("err = %q, want it to say killed and carry the output", err)
		}
		pids := readPIDs(t, pidfile)
		if len(pids) != 2 {
			t.Fatalf("pid file holds %v, want the child's and the script's", pids)
		}
		for _, pid := range pids {
			waitGone(t, pid)
		}
	})

	t.Run("ExitKillsLeftoversAndReturns", func(t *testing.T) {
		t.Parallel()
		pidfile := filepath.Join(dir, "leaver.pids")
		out, err := e.Execute(context.Background(), execDelivery("leaver", map[string]string{"pidfile": pidfile}))
		if err != nil || out != "done\n" {
			t.Fatalf("Execute = %q, %v; want %q", out, err, "done\n")
		}
		for _, pid := range readPIDs(t, pidfile) {
			waitGone(t, pid)
		}
	})
}

func TestNewExecConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := writeScript(t, dir, "ok.sh", "exit 0\n")
	plain := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cmds map[string]executors.ExecCommand
		want string
	}{
		{"EmptyName", map[string]executors.ExecCommand{" ": {Path: script}}, "empty name"},
		{"RelativePath", map[string]executors.ExecCommand{"c": {Path: "ok.sh"}}, "not absolute"},
		{"MissingPath", map[string]executors.ExecCommand{"c": {Path: filepath.Join(dir, "nope")}}, "no such file"},
		{"NotExecutable", map[string]executors.ExecCommand{"c": {Path: plain}}, "not an executable"},
		{"Directory", map[string]executors.ExecCommand{"c": {Path: dir}}, "not an executable"},
		{"RelativeDir", map[string]executors.ExecCommand{"c": {Path: script, Dir: "tmp"}}, "dir"},
		{"BadTemplate", map[string]executors.ExecCommand{"c": {Path: script, Args: []string{"ok", "{{name"}}}, "args[1]"},
		{"BadEnv", map[string]executors.ExecCommand{"c": {Path: script, Env: []string{"NOEQUALS"}}}, "KEY=value"},
		{"ReservedEnv", map[string]executors.ExecCommand{"c": {Path: script, Env: []string{"CRONSHEET_TASK_ID=x"}}}, "CRONSHEET_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := executors.NewExec(nil, executors.ExecConfig{Commands: tt.cmds})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewExec = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
