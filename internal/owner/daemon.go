package owner

import (
	"os"
	"os/exec"
	"syscall"
)

// StartDaemon starts exe with args as dir's owner daemon: in a session of its own, so
// that it outlives the process that started it, logging to Log(dir).
func StartDaemon(dir, exe string, args []string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	log, err := os.OpenFile(Log(dir), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reaped here while the starter lives, by init after
	return nil
}
