package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/cache"
	schedulerapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	scheduleroptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"sigs.k8s.io/yaml"
)

// startScheduler runs kube-scheduler (k8s.io/kubernetes/cmd/kube-scheduler/app, the code the
// kube-scheduler binary runs) in this process against the API server of kubeconfig, with the
// KubeSchedulerConfiguration file configPath. The file is copied into dir with
// clientConnection.kubeconfig set to kubeconfig when it names none, so a test can write one
// configuration before the admin kubeconfig exists. Secure serving is off (no port), so the
// scheduler needs no serving certificate or delegated authentication. Feature gates are shared
// with kube-apiserver: both use the process-wide default gate that --feature-gates set.
//
// The cobra command (app.NewSchedulerCommand) cannot be used here: it installs a second
// process-wide signal handler, which panics next to kube-apiserver's; Setup and Run are what it
// runs after that.
func startScheduler(ctx context.Context, configPath, dir, kubeconfig string) (<-chan error, error) {
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
	written := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(written, out, 0o600); err != nil {
		return nil, err
	}
	opts := scheduleroptions.NewOptions()
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
