package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/tools/cache"
	schedulerapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	scheduleroptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"sigs.k8s.io/yaml"
)

// startScheduler runs kube-scheduler (k8s.io/kubernetes/cmd/kube-scheduler/app, the code the
// kube-scheduler binary runs) in this process against the API server of kubeconfig, with the
// KubeSchedulerConfiguration file configPath. The file is copied to dir/written with
// clientConnection.kubeconfig set to kubeconfig when it names none, so a test can write one
// configuration before the admin kubeconfig exists. Secure serving is off (no port), so the
// scheduler needs no serving certificate or delegated authentication. With featureGates empty the
// gates are shared with kube-apiserver (both use the process-wide default gate that its
// --feature-gates set); a scheduler child (its own process) passes the launcher's --feature-gates,
// applied as kube-scheduler's own --feature-gates flag would be.
//
// The cobra command (app.NewSchedulerCommand) cannot be used here: it installs a second
// process-wide signal handler, which panics next to kube-apiserver's; Setup and Run are what it
// runs after that.
func startScheduler(ctx context.Context, configPath, dir, written, kubeconfig, featureGates string) (<-chan error, error) {
	raw, err := os.ReadFile(configPath)
	if err != nil {
		return nil, fmt.Errorf("--with-scheduler: cannot read %s: %w", configPath, err)
	}
	var cfg map[string]interface{}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("--with-scheduler %s is not YAML: %w", configPath, err)
	}
	if cfg == nil {
		return nil, fmt.Errorf("--with-scheduler %s is empty; it must be a KubeSchedulerConfiguration", configPath)
	}
	cc, _ := cfg["clientConnection"].(map[string]interface{})
	if cc == nil {
		cc = map[string]interface{}{}
		cfg["clientConnection"] = cc
	}
	if k, _ := cc["kubeconfig"].(string); k == "" {
		cc["kubeconfig"] = kubeconfig
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	written = filepath.Join(dir, written)
	if err := os.WriteFile(written, out, 0o600); err != nil {
		return nil, err
	}
	opts := scheduleroptions.NewOptions()
	if featureGates != "" {
		if err := opts.Flags.FlagSet("feature gate").Parse([]string{"--feature-gates=" + featureGates}); err != nil {
			return nil, fmt.Errorf("kube-scheduler --feature-gates=%s: %w", featureGates, err)
		}
	}
	opts.ConfigFile = written
	opts.SecureServing.BindPort = 0
	informerName, err := cache.NewInformerName("kube-scheduler")
	if err != nil {
		return nil, err
	}
	opts.InformerName = informerName
	completed, sched, err := schedulerapp.Setup(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("kube-scheduler with %s: %w", configPath, err)
	}
	done := make(chan error, 1)
	go func() { done <- schedulerapp.Run(ctx, completed, sched) }()
	return done, nil
}

// schedulerSubcommand is the first argument of a further scheduler's child:
// "realcluster scheduler <config> <dir> <written> <kubeconfig> <feature gates>".
const schedulerSubcommand = "scheduler"

// runSchedulerChild is a further kube-scheduler's main, in its own process: configz and the
// scheduler's metrics are process-wide registrations that a second Run in the launcher's process
// refuses ("unable to register configz"), so each --with-scheduler after the first runs here. It
// stops on SIGTERM/SIGINT, and dies with the launcher (PR_SET_PDEATHSIG).
func runSchedulerChild(args []string) int {
	if len(args) != 5 {
		fmt.Fprintf(os.Stderr, "error: realcluster scheduler wants 5 arguments (config dir written kubeconfig feature-gates), got %q\n", args)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	done, err := startScheduler(ctx, args[0], args[1], args[2], args[3], args[4])
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		return 1
	}
	if err := <-done; err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "error: kube-scheduler (%s): %v\n", args[0], err)
		return 1
	}
	return 0
}

// schedulerChild is a further kube-scheduler run by startSchedulerChild.
type schedulerChild struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has ended; err is then set
	err  error
}

// startSchedulerChild starts "realcluster scheduler ..." for the n-th --with-scheduler (n >= 2),
// writing its completed configuration to dir/scheduler-config-<n>.yaml.
func startSchedulerChild(n int, configPath, dir, kubeconfig, featureGates string) (*schedulerChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, schedulerSubcommand, configPath, dir,
		fmt.Sprintf("scheduler-config-%d.yaml", n), kubeconfig, featureGates)
	cmd.Stdout = os.Stderr // stdout is this launcher's line protocol
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("--with-scheduler %s: cannot start its process: %w", configPath, err)
	}
	c := &schedulerChild{cmd: cmd, done: make(chan struct{})}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	return c, nil
}

// stop sends SIGTERM and waits up to 10 s, then kills.
func (c *schedulerChild) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		fmt.Fprintln(os.Stderr, "a kube-scheduler child did not stop within 10s; killing it")
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.done
	}
}
