// Command realcluster runs a real Kubernetes control plane for hami-lock's tests: an embedded etcd
// (go.etcd.io/etcd/server/v3/embed) and kube-apiserver in-process (k8s.io/kubernetes/cmd/kube-apiserver/app,
// the same command the kube-apiserver binary runs), both on 127.0.0.1, with all state in one fresh
// temporary directory.
//
// Protocol on stdout (one line each, in this order, nothing else is written to stdout):
//
//	dir <temporary directory>
//	etcd <etcd client URL>       (gRPC and its HTTP/JSON gateway, e.g. POST <url>/v3/kv/compaction)
//	ready <kubeconfig path>      (after /readyz answered 200 and default/default ServiceAccount exists,
//	                              and, with --with-scheduler, after kube-scheduler has started)
//
// With --with-scheduler CONFIG it also runs kube-scheduler (k8s.io/kubernetes/cmd/kube-scheduler/app)
// in-process against the same API server, with the KubeSchedulerConfiguration CONFIG (see
// scheduler.go); --feature-gates then applies to both components. A second --with-scheduler runs a
// further kube-scheduler, each in a child process ("realcluster scheduler ...", same --feature-gates),
// e.g. with its own schedulerName and extender: "ready" follows the first one's start; the children
// set up concurrently, and any scheduler's end stops the launcher with an error.
//
// With --apiserver-child, kube-apiserver runs in a child process instead (this binary re-executed as
// "realcluster apiserver <kube-apiserver flags>"), so a test can kill it alone while etcd keeps its
// data. Then stdout also carries, at any time after "etcd":
//
//	apiserver-pid <pid>          (each time a kube-apiserver child starts; before "ready" the first time)
//	apiserver-exited <status>    (the child ended: killed, crashed, or stopped by a control line)
//	apiserver-ready              (a restarted child answered /readyz 200; not printed for the first start)
//
// and standard input takes control lines: "kill-apiserver" (SIGKILL the child), "start-apiserver"
// (start a new child on the same port and etcd, if none runs), "restart-apiserver" (both).
// Unknown lines are reported on stderr and ignored.
//
// Logs go to stderr. The process stops both servers and removes the temporary directory and the
// kubeconfig it wrote on SIGTERM/SIGINT or when its standard input closes (unless --ignore-stdin).
// A start-up failure exits with status 1 after the same clean-up, with a one-line "error: ..." on
// stderr naming the cause and the fix.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	serviceaccountcontroller "k8s.io/kubernetes/pkg/controller/serviceaccount"
)

const (
	kubernetesModule = "k8s.io/kubernetes"
	etcdModule       = "go.etcd.io/etcd/server/v3"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

type options struct {
	kubeconfigOut  string
	featureGates   string
	runtimeConfig  string
	withScheduler  multiFlag
	securePort     int
	etcdPort       int
	startupTimeout time.Duration
	ignoreStdin    bool
	verbosity      int
	apiserverArgs  multiFlag
	version        bool
	apiserverChild bool
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == apiserverSubcommand {
		os.Exit(runAPIServerChild(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == schedulerSubcommand {
		os.Exit(runSchedulerChild(os.Args[2:]))
	}
	var o options
	fs := flag.NewFlagSet("realcluster", flag.ContinueOnError)
	fs.StringVar(&o.kubeconfigOut, "kubeconfig-out", "", "where to write the admin kubeconfig (default: <temp dir>/kubeconfig); removed on exit")
	fs.StringVar(&o.featureGates, "feature-gates", "", "passed to kube-apiserver --feature-gates")
	fs.StringVar(&o.runtimeConfig, "runtime-config", "", "passed to kube-apiserver --runtime-config")
	fs.Var(&o.withScheduler, "with-scheduler", "also run kube-scheduler with this KubeSchedulerConfiguration file (clientConnection.kubeconfig defaults to the admin kubeconfig); repeatable: the first runs in this process, each further one in its own child process")
	fs.IntVar(&o.securePort, "secure-port", 0, "kube-apiserver secure port on 127.0.0.1 (0: a free port)")
	fs.IntVar(&o.etcdPort, "etcd-port", 0, "etcd client port on 127.0.0.1 (0: a free port)")
	fs.DurationVar(&o.startupTimeout, "startup-timeout", 180*time.Second, "give up when not ready after this long")
	fs.BoolVar(&o.ignoreStdin, "ignore-stdin", false, "do not stop when standard input closes (stop with SIGTERM only)")
	fs.IntVar(&o.verbosity, "v", 0, "kube-apiserver log verbosity")
	fs.Var(&o.apiserverArgs, "apiserver-arg", "extra kube-apiserver flag, e.g. --apiserver-arg=--watch-cache=false (repeatable)")
	fs.BoolVar(&o.version, "version", false, "print the module versions this binary was built from and exit")
	fs.BoolVar(&o.apiserverChild, "apiserver-child", false, "run kube-apiserver as a child process that stdin control lines kill-apiserver, start-apiserver, restart-apiserver can kill and restart on the same port and etcd (prints apiserver-pid, apiserver-exited, apiserver-ready lines)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fail(fmt.Errorf("unexpected arguments %q; all options are flags (see --help)", fs.Args()))
	}
	if o.version {
		fmt.Println(versionLine())
		return
	}
	for _, config := range o.withScheduler {
		// checked before anything starts; startScheduler reads it again once the API server is ready
		if _, err := os.ReadFile(config); err != nil {
			fail(fmt.Errorf("--with-scheduler: cannot read %s: %w (pass a KubeSchedulerConfiguration file)", config, err))
		}
	}
	os.Exit(run(o))
}

// versionLine names the versions of the modules linked into this binary, read from its build info.
func versionLine() string {
	k8s, etcd := "unknown", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case kubernetesModule:
				k8s = d.Version
			case etcdModule:
				etcd = d.Version
			}
		}
	}
	return fmt.Sprintf("realcluster kubernetes %s etcd %s", k8s, etcd)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "error: %v\n", err)
	os.Exit(1)
}

func run(o options) int {
	dir, err := os.MkdirTemp("", "realcluster-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: cannot create a temporary directory: %v (check TMPDIR and free disk space)\n", err)
		return 1
	}
	kubeconfig := o.kubeconfigOut
	if kubeconfig == "" {
		kubeconfig = filepath.Join(dir, "kubeconfig")
	}
	removeFiles := func() {
		if o.kubeconfigOut != "" {
			_ = os.Remove(o.kubeconfigOut)
		}
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintf(os.Stderr, "error: cannot remove %s: %v\n", dir, err)
		}
	}
	fmt.Printf("dir %s\n", dir)

	// Signals first: kube-apiserver's own handler (installed by NewAPIServerCommand) cancels its
	// context on the first SIGTERM/SIGINT and exits the process on the second.
	sigCh := make(chan os.Signal, 2)
	signal.Notify(sigCh, syscall.SIGTERM, syscall.SIGINT)
	// A parent that closed our stdout/stderr (Java's Process.destroy does) must not turn the
	// clean-up into a death by SIGPIPE: writes then just fail.
	signal.Ignore(syscall.SIGPIPE)
	stdinClosed := make(chan struct{})
	controlLines := make(chan string, 64)
	if !o.ignoreStdin {
		go func() {
			if o.apiserverChild {
				readControlLines(os.Stdin, controlLines)
			} else {
				_, _ = io.Copy(io.Discard, os.Stdin)
			}
			close(stdinClosed)
		}()
	}

	etcdServer, etcdURL, err := startEtcd(dir, o.etcdPort, o.startupTimeout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: etcd did not start: %v\n", err)
		removeFiles()
		return 1
	}
	stopEtcd := func() {
		etcdServer.Close()
	}
	fmt.Printf("etcd %s\n", etcdURL)

	port := o.securePort
	if port == 0 {
		if port, err = freePort(); err != nil {
			fmt.Fprintf(os.Stderr, "error: no free port on 127.0.0.1: %v\n", err)
			stopEtcd()
			removeFiles()
			return 1
		}
	} else if err := portFree(port); err != nil {
		fmt.Fprintf(os.Stderr, "error: --secure-port %d is busy (%v); stop what listens there or pass --secure-port 0 for a free port\n", port, err)
		stopEtcd()
		removeFiles()
		return 1
	}

	pki, err := writePKI(filepath.Join(dir, "pki"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: cannot write certificates: %v\n", err)
		stopEtcd()
		removeFiles()
		return 1
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", port)
	if err := writeKubeconfig(kubeconfig, server, pki); err != nil {
		fmt.Fprintf(os.Stderr, "error: cannot write the kubeconfig %s: %v (is its directory writable?)\n", kubeconfig, err)
		stopEtcd()
		removeFiles()
		return 1
	}

	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
		"--tls-cert-file=" + pki.servingCert,
		"--tls-private-key-file=" + pki.servingKey,
		"--client-ca-file=" + pki.caCert,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.saPublic,
		"--service-account-signing-key-file=" + pki.saPrivate,
		"--service-cluster-ip-range=10.0.0.0/24",
		// A loopback advertise address cannot be written into the kubernetes Service's endpoints.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		"--v=" + strconv.Itoa(o.verbosity),
	}
	if o.featureGates != "" {
		args = append(args, "--feature-gates="+o.featureGates)
	}
	if o.runtimeConfig != "" {
		args = append(args, "--runtime-config="+o.runtimeConfig)
	}
	args = append(args, o.apiserverArgs...)

	var api apiserverRunner
	if o.apiserverChild {
		child, err := startAPIServerChild(args)
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: cannot start the kube-apiserver child: %v\n", err)
			stopEtcd()
			removeFiles()
			return 1
		}
		api = child
	} else {
		api = startAPIServerInProcess(args)
	}
	apiserverDone := api.done()

	// The ServiceAccount controller's watches must end first: open watch connections would hold
	// kube-apiserver's graceful HTTP shutdown until its 60 s timeout.
	ctrlCtx, stopController := context.WithCancel(context.Background())
	shutdown := func(signalled bool, code int) int {
		signal.Stop(sigCh)
		stopController()
		api.stop(signalled)
		stopEtcd()
		removeFiles()
		return code
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	readyErr := make(chan error, 1)
	go func() { readyErr <- waitReady(ctx, ctrlCtx, server, kubeconfig, pki) }()
	deadline := time.After(o.startupTimeout)
	select {
	case err := <-readyErr:
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: kube-apiserver not ready: %v\n", err)
			return shutdown(false, 1)
		}
	case err := <-apiserverDone:
		fmt.Fprintf(os.Stderr, "error: kube-apiserver exited during start-up: %v (see the log above)\n", err)
		stopController()
		stopEtcd()
		removeFiles()
		return 1
	case err := <-etcdServer.Err():
		fmt.Fprintf(os.Stderr, "error: etcd failed during start-up: %v\n", err)
		return shutdown(false, 1)
	case <-deadline:
		fmt.Fprintf(os.Stderr, "error: kube-apiserver not ready after %s (%s/readyz); raise --startup-timeout on a slow machine or read the log above\n", o.startupTimeout, server)
		return shutdown(false, 1)
	case s := <-sigCh:
		fmt.Fprintf(os.Stderr, "%s during start-up: stopping\n", s)
		return shutdown(true, 1)
	case <-stdinClosed:
		fmt.Fprintln(os.Stderr, "standard input closed during start-up: stopping")
		return shutdown(false, 1)
	}

	var schedulerDone <-chan error
	stopScheduler := func() {}
	if len(o.withScheduler) > 0 {
		schedCtx, schedCancel := context.WithCancel(context.Background())
		schedulerDone, err = startScheduler(schedCtx, o.withScheduler[0], dir, "scheduler-config.yaml", kubeconfig, "")
		if err != nil {
			schedCancel()
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			return shutdown(false, 1)
		}
		var children []*schedulerChild
		stopScheduler = func() {
			for _, c := range children {
				c.stop()
			}
			schedCancel()
			select {
			case <-schedulerDone:
			case <-time.After(10 * time.Second):
				fmt.Fprintln(os.Stderr, "kube-scheduler did not stop within 10s")
			}
		}
		merged := make(chan error, len(o.withScheduler))
		for i, config := range o.withScheduler[1:] {
			c, err := startSchedulerChild(i+2, config, dir, kubeconfig, o.featureGates)
			if err != nil {
				fmt.Fprintf(os.Stderr, "error: %v\n", err)
				stopScheduler()
				return shutdown(false, 1)
			}
			children = append(children, c)
			go func() {
				<-c.done
				merged <- fmt.Errorf("the kube-scheduler child with %s ended: %s", config, exitStatus(c.err))
			}()
		}
		first := schedulerDone
		go func() { merged <- <-first }()
		schedulerDone = merged
	}
	shutdownAll := func(signalled bool, code int) int {
		stopScheduler()
		return shutdown(signalled, code)
	}

	fmt.Printf("ready %s\n", kubeconfig)

	for {
		select {
		case s := <-sigCh:
			fmt.Fprintf(os.Stderr, "%s: stopping\n", s)
			return shutdownAll(true, 0)
		case <-stdinClosed:
			// A parent's SIGTERM comes with its pipes closing (Java's Process.destroy): take the
			// signal if it is there, since the self-signal of shutdown(false) would be a second
			// SIGTERM, on which kube-apiserver exits at once with status 1.
			select {
			case s := <-sigCh:
				fmt.Fprintf(os.Stderr, "%s: stopping\n", s)
				return shutdownAll(true, 0)
			case <-time.After(300 * time.Millisecond):
			}
			fmt.Fprintln(os.Stderr, "standard input closed: stopping")
			return shutdownAll(false, 0)
		case err := <-schedulerDone:
			fmt.Fprintf(os.Stderr, "error: kube-scheduler exited: %v\n", err)
			return shutdown(false, 1)
		case err := <-apiserverDone:
			child, ok := api.(*apiserverChild)
			if !ok {
				fmt.Fprintf(os.Stderr, "error: kube-apiserver exited: %v\n", err)
				stopScheduler()
				stopController()
				stopEtcd()
				removeFiles()
				return 1
			}
			// A killed child is what --apiserver-child is for: keep etcd, wait for start-apiserver.
			fmt.Printf("apiserver-exited %s\n", exitStatus(err))
			child.exited()
			apiserverDone = nil
		case line := <-controlLines:
			child, ok := api.(*apiserverChild)
			if !ok {
				continue
			}
			switch line {
			case "kill-apiserver", "restart-apiserver":
				if apiserverDone != nil {
					child.kill()
					if line == "kill-apiserver" {
						continue // reported by the apiserverDone case
					}
					fmt.Printf("apiserver-exited %s\n", exitStatus(<-apiserverDone))
					child.exited()
					apiserverDone = nil
				} else if line == "kill-apiserver" {
					fmt.Fprintln(os.Stderr, "kill-apiserver: no kube-apiserver child is running")
					continue
				}
				fallthrough
			case "start-apiserver":
				if apiserverDone != nil {
					fmt.Fprintln(os.Stderr, "start-apiserver: a kube-apiserver child is already running")
					continue
				}
				if err := child.start(); err != nil {
					fmt.Fprintf(os.Stderr, "error: cannot restart the kube-apiserver child: %v\n", err)
					continue
				}
				apiserverDone = child.done()
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), o.startupTimeout)
					defer cancel()
					if err := waitReadyz(ctx, server, pki); err != nil {
						fmt.Fprintf(os.Stderr, "error: restarted kube-apiserver not ready: %v\n", err)
						return
					}
					fmt.Println("apiserver-ready")
				}()
			default:
				fmt.Fprintf(os.Stderr, "unknown control line %q (known: kill-apiserver, start-apiserver, restart-apiserver); ignored\n", line)
			}
		case err := <-etcdServer.Err():
			fmt.Fprintf(os.Stderr, "error: etcd failed: %v\n", err)
			return shutdownAll(false, 1)
		}
	}
}

// apiserverSubcommand is the first argument of the kube-apiserver child: "realcluster apiserver <flags>".
const apiserverSubcommand = "apiserver"

// apiserverRunner is kube-apiserver in this process or in a child process.
type apiserverRunner interface {
	// done delivers the end of kube-apiserver (of the current child).
	done() <-chan error
	// stop stops it (signalled: this process already got SIGTERM/SIGINT) and waits for its end.
	stop(signalled bool)
}

// apiserverInProcess runs kube-apiserver's command in this process (the default).
type apiserverInProcess struct{ finished chan error }

func startAPIServerInProcess(args []string) *apiserverInProcess {
	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(args)
	cmd.SilenceErrors = true
	a := &apiserverInProcess{finished: make(chan error, 1)}
	go func() { a.finished <- cmd.Execute() }()
	return a
}

func (a *apiserverInProcess) done() <-chan error { return a.finished }

func (a *apiserverInProcess) stop(signalled bool) {
	if !signalled {
		// Cancels kube-apiserver's signal context, the only way to stop the command cleanly.
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
	select {
	case err := <-a.finished:
		if err != nil {
			fmt.Fprintf(os.Stderr, "kube-apiserver stopped: %v\n", err)
		}
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "kube-apiserver did not stop within 30s; stopping etcd anyway")
	}
}

// apiserverChild runs kube-apiserver as "realcluster apiserver <flags>" in a child process that
// dies with this one (PR_SET_PDEATHSIG), so it can be killed and restarted alone.
type apiserverChild struct {
	args     []string
	cmd      *exec.Cmd
	finished chan error
}

func startAPIServerChild(args []string) (*apiserverChild, error) {
	c := &apiserverChild{args: args}
	return c, c.start()
}

func (c *apiserverChild) start() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, append([]string{apiserverSubcommand}, c.args...)...)
	cmd.Stdout = os.Stderr // stdout is this launcher's line protocol
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	c.cmd = cmd
	c.finished = make(chan error, 1)
	finished := c.finished
	go func() { finished <- cmd.Wait() }()
	fmt.Printf("apiserver-pid %d\n", cmd.Process.Pid)
	return nil
}

func (c *apiserverChild) done() <-chan error { return c.finished }

func (c *apiserverChild) exited() { c.cmd = nil }

func (c *apiserverChild) kill() {
	if c.cmd != nil {
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
	}
}

func (c *apiserverChild) stop(bool) {
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.finished:
		if err != nil {
			fmt.Fprintf(os.Stderr, "kube-apiserver child stopped: %v\n", err)
		}
	case <-time.After(10 * time.Second):
		// Its data is thrown away with etcd's anyway; a graceful end only saves log noise.
		fmt.Fprintln(os.Stderr, "kube-apiserver child did not stop within 10s; killing it")
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.finished
	}
}

func exitStatus(err error) string {
	if err == nil {
		return "exit 0"
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "signal " + ws.Signal().String()
		}
		return "exit " + strconv.Itoa(ee.ExitCode())
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// runAPIServerChild is the child's main: kube-apiserver's command with the given flags.
func runAPIServerChild(args []string) int {
	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(args)
	cmd.SilenceErrors = true
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "error: kube-apiserver: %v\n", err)
		return 1
	}
	return 0
}

func readControlLines(in io.Reader, lines chan<- string) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		select {
		case lines <- line:
		default:
			fmt.Fprintf(os.Stderr, "control line %q dropped: too many pending\n", line)
		}
	}
}

func startEtcd(dir string, port int, timeout time.Duration) (*embed.Etcd, string, error) {
	var err error
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, "", err
		}
	} else if err := portFree(port); err != nil {
		return nil, "", fmt.Errorf("--etcd-port %d is busy (%v); stop what listens there or pass --etcd-port 0 for a free port", port, err)
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	clientURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", port)}
	peerURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}
	cfg := embed.NewConfig()
	cfg.Name = "realcluster"
	cfg.Dir = filepath.Join(dir, "etcd")
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	cfg.EnableGRPCGateway = true
	// Throw-away test data: fsync only costs time here.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, clientURL.String(), nil
	case err := <-e.Err():
		e.Close()
		return nil, "", err
	case <-time.After(timeout):
		e.Close()
		return nil, "", fmt.Errorf("not ready after %s", timeout)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func portFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	return l.Close()
}

type pkiFiles struct {
	caCert, servingCert, servingKey, adminCert, adminKey, saPrivate, saPublic string
	caPEM, adminCertPEM, adminKeyPEM                                          []byte
}

// writePKI generates a CA, a serving certificate for 127.0.0.1/localhost, an admin client
// certificate (group system:masters) and the service-account signing key pair.
func writePKI(dir string) (*pkiFiles, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	now := time.Now().Add(-time.Hour)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "realcluster-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	issue := func(serial int64, tmpl *x509.Certificate) ([]byte, []byte, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore = now
		tmpl.NotAfter = now.Add(10 * 365 * 24 * time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
	}
	servingCert, servingKey, err := issue(2, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	})
	if err != nil {
		return nil, err
	}
	adminCert, adminKey, err := issue(3, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "realcluster-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saKeyDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	p := &pkiFiles{
		caCert:       filepath.Join(dir, "ca.crt"),
		servingCert:  filepath.Join(dir, "apiserver.crt"),
		servingKey:   filepath.Join(dir, "apiserver.key"),
		adminCert:    filepath.Join(dir, "admin.crt"),
		adminKey:     filepath.Join(dir, "admin.key"),
		saPrivate:    filepath.Join(dir, "sa.key"),
		saPublic:     filepath.Join(dir, "sa.pub"),
		caPEM:        pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		adminCertPEM: adminCert,
		adminKeyPEM:  adminKey,
	}
	files := map[string][]byte{
		p.caCert:      p.caPEM,
		p.servingCert: servingCert,
		p.servingKey:  servingKey,
		p.adminCert:   adminCert,
		p.adminKey:    adminKey,
		p.saPrivate:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saKeyDER}),
		p.saPublic:    pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}),
	}
	for name, data := range files {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func writeKubeconfig(path, server string, p *pkiFiles) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["realcluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos["realcluster-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: p.adminCertPEM, ClientKeyData: p.adminKeyPEM}
	cfg.Contexts["realcluster"] = &clientcmdapi.Context{Cluster: "realcluster", AuthInfo: "realcluster-admin", Namespace: "default"}
	cfg.CurrentContext = "realcluster"
	return clientcmd.WriteToFile(*cfg, path)
}

// waitReady polls /readyz until it answers 200, then runs the ServiceAccount controller of
// kube-controller-manager (so pods can be created in any namespace under the default admission
// plugins) and waits for default/default to exist.
func waitReady(ctx, ctrlCtx context.Context, server, kubeconfig string, p *pkiFiles) error {
	pair, err := tls.X509KeyPair(p.adminCertPEM, p.adminKeyPEM)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.caPEM)
	httpClient := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}},
	}
	if err := pollReadyz(ctx, httpClient, server); err != nil {
		return err
	}
	var last string
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	controller, err := serviceaccountcontroller.NewServiceAccountsController(klog.Background(),
		factory.Core().V1().ServiceAccounts(), factory.Core().V1().Namespaces(), client,
		serviceaccountcontroller.DefaultServiceAccountsControllerOptions())
	if err != nil {
		return err
	}
	factory.Start(ctrlCtx.Done())
	go controller.Run(ctrlCtx, 1)
	for {
		_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (waiting for ServiceAccount default/default: %s)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitReadyz polls /readyz with the admin certificate until it answers 200.
func waitReadyz(ctx context.Context, server string, p *pkiFiles) error {
	pair, err := tls.X509KeyPair(p.adminCertPEM, p.adminKeyPEM)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.caPEM)
	return pollReadyz(ctx, &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}},
	}, server)
}

func pollReadyz(ctx context.Context, httpClient *http.Client, server string) error {
	var last string
	for {
		resp, err := httpClient.Get(server + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, lastLines(body))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last /readyz answer: %s)", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}

	return nil
}

func lastLines(body []byte) string {
	lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
	var failed []string
	for _, l := range lines {
		if bytes.Contains(l, []byte("failed")) {
			failed = append(failed, string(l))
		}
	}
	if len(failed) == 0 && len(lines) > 0 {
		return string(lines[len(lines)-1])
	}
	return strings.Join(failed, "; ")
}
