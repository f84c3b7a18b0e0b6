// Command kube-scheduler is the kube-scheduler of k8s.io/kubernetes v1.34.7 with
// scheduler-plugins v0.34.7's Coscheduling plugin registered: the scheduler the gang-scheduling
// guide runs (its profile names Coscheduling in multiPoint). Test infrastructure only; flags are
// kube-scheduler's own (--config, --v, ...).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	// Registers CoschedulingArgs in the scheduler's configuration scheme (pluginConfig args).
	_ "sigs.k8s.io/scheduler-plugins/apis/config/scheme"
	"sigs.k8s.io/scheduler-plugins/pkg/coscheduling"
)

func main() {
	command := app.NewSchedulerCommand(app.WithPlugin(coscheduling.Name, coscheduling.New))
	os.Exit(cli.Run(command))
}
