// Command podrequests prints Kubernetes' own PodRequests for pods, so that tests can compare
// hami-lock's aggregation of init containers, native sidecars and app containers with the library
// kube-scheduler and the kubelet use (k8s.io/component-helpers/resource, at the version go.mod
// names, which is the control plane's version).
//
// Standard input: pods as JSON, one per line, or concatenated, or as a List (a JSON object with
// "items", e.g. the answer of GET /api/v1/namespaces/NS/pods). Standard output: one JSON object per
// pod, in input order:
//
//	{"namespace":"ns","name":"p","requests":{"cpu":"0.5","nvidia.com/gpumem":"8000",...}}
//
// where requests is resource.PodRequests(pod, PodResourcesOptions{ExcludeOverhead: true}) with every
// quantity as a plain decimal number (no suffix, no exponent). A pod that is not valid JSON exits 1
// with one "error: ..." line on stderr naming its position.
//
// --version prints "podrequests k8s.io/component-helpers <version> k8s.io/api <version>".
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/resource"
)

type result struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Requests  map[string]string `json:"requests"`
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Printf("podrequests k8s.io/component-helpers %s k8s.io/api %s\n",
			moduleVersion("k8s.io/component-helpers"), moduleVersion("k8s.io/api"))
		return
	}
	if len(os.Args) != 1 {
		fail(fmt.Errorf("unexpected arguments %q (usage: podrequests [--version] < pods.json)", os.Args[1:]))
	}
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	dec := json.NewDecoder(bufio.NewReader(os.Stdin))
	n := 0
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			fail(fmt.Errorf("input value #%d is not JSON: %w", n+1, err))
		}
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		pods := []json.RawMessage{raw}
		if err := json.Unmarshal(raw, &list); err == nil && list.Items != nil {
			pods = list.Items
		}
		for _, p := range pods {
			n++
			var pod v1.Pod
			if err := json.Unmarshal(p, &pod); err != nil {
				fail(fmt.Errorf("pod #%d is not a v1 Pod: %w", n, err))
			}
			if err := enc.Encode(requests(&pod)); err != nil {
				fail(err)
			}
		}
	}
	if err := out.Flush(); err != nil {
		fail(err)
	}
}

func requests(pod *v1.Pod) result {
	reqs := resource.PodRequests(pod, resource.PodResourcesOptions{ExcludeOverhead: true})
	names := make([]string, 0, len(reqs))
	for name := range reqs {
		names = append(names, string(name))
	}
	sort.Strings(names)
	r := result{Namespace: pod.Namespace, Name: pod.Name, Requests: map[string]string{}}
	for _, name := range names {
		q := reqs[v1.ResourceName(name)]
		r.Requests[name] = q.AsDec().String()
	}
	return r
}

// moduleVersion is the version of module path this binary was built with (after replace lines).
func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range info.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "unknown"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}
