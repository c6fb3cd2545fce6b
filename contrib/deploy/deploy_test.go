// Package deploy_test checks examples/deploy without a cluster: the
// Fleet manifest parses and agrees with the image (port, protocol, drain
// time), and the Dockerfile builds what the Fleet runs.
package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const dir = "../../examples/deploy"

type fleet struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Replicas   int    `yaml:"replicas"`
		Scheduling string `yaml:"scheduling"`
		Template   struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				Ports []struct {
					Name          string `yaml:"name"`
					PortPolicy    string `yaml:"portPolicy"`
					ContainerPort int    `yaml:"containerPort"`
					Protocol      string `yaml:"protocol"`
				} `yaml:"ports"`
				Health struct {
					InitialDelaySeconds int `yaml:"initialDelaySeconds"`
					PeriodSeconds       int `yaml:"periodSeconds"`
					FailureThreshold    int `yaml:"failureThreshold"`
				} `yaml:"health"`
				Template struct {
					Spec struct {
						TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
						Containers                    []struct {
							Name            string `yaml:"name"`
							Image           string `yaml:"image"`
							ImagePullPolicy string `yaml:"imagePullPolicy"`
							Resources       struct {
								Requests map[string]string `yaml:"requests"`
								Limits   map[string]string `yaml:"limits"`
							} `yaml:"resources"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func TestFleetManifest(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(dir, "fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f fleet
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true) // a misspelt field fails here, not in the cluster
	if err := dec.Decode(&f); err != nil {
		t.Fatal(err)
	}
	if f.APIVersion != "agones.dev/v1" || f.Kind != "Fleet" || f.Metadata.Name == "" || f.Spec.Replicas < 1 {
		t.Fatalf("fleet header %+v", f)
	}
	gs := f.Spec.Template.Spec
	if len(gs.Ports) != 1 || gs.Ports[0].ContainerPort != 7777 || gs.Ports[0].Protocol != "UDP" || gs.Ports[0].PortPolicy != "Dynamic" {
		t.Fatalf("ports %+v: want one dynamic UDP port to container port 7777 (arena server --listen :7777, QUIC)", gs.Ports)
	}
	// agonesrun pings every 2 s: at least two pings per period.
	if gs.Health.PeriodSeconds < 4 || gs.Health.FailureThreshold < 1 {
		t.Fatalf("health %+v", gs.Health)
	}
	pod := gs.Template.Spec
	if len(pod.Containers) != 1 || pod.Containers[0].Image == "" || pod.Containers[0].Resources.Requests["cpu"] == "" {
		t.Fatalf("containers %+v", pod.Containers)
	}
	// agonesrun drains for up to 30 s after SIGTERM; Kubernetes kills at
	// the grace period.
	if pod.TerminationGracePeriodSeconds <= 30 {
		t.Fatalf("terminationGracePeriodSeconds %d: want more than agonesrun's 30 s drain", pod.TerminationGracePeriodSeconds)
	}
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{
		"go build -trimpath -o /out/arena ./arena",
		"./deploy/agonesrun",
		"EXPOSE 7777/udp",
		`CMD ["arena", "server", "--listen", ":7777"`,
		"COPY examples/deploy/entrypoint.sh",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^FROM golang:1\.26`).MatchString(df) {
		t.Errorf("build stage is not Go 1.26")
	}
	st, err := os.Stat(filepath.Join(dir, "entrypoint.sh"))
	if err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("entrypoint.sh missing or not executable: %v", err)
	}
	sh, _ := os.ReadFile(filepath.Join(dir, "entrypoint.sh"))
	if !strings.Contains(string(sh), `exec agonesrun`) || !strings.Contains(string(sh), "Xvfb") {
		t.Errorf("entrypoint.sh does not start Xvfb and exec agonesrun")
	}
}
