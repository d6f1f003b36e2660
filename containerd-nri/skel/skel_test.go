package skel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	types "github.com/containerd/nri/types/v1"
)

// echo returns its request's labels as result metadata, or fails when the
// request carries the label "fail".
type echo struct{}

func (echo) Type() string { return "echo" }

func (echo) Invoke(_ context.Context, r *types.Request) (*types.Result, error) {
	if msg, ok := r.Labels["fail"]; ok {
		return &types.Result{Plugin: "ignored", Metadata: map[string]string{"ignored": "yes"}}, errors.New(msg)
	}
	res := r.NewResult("echo")
	for k, v := range r.Labels {
		res.Metadata[k] = v
	}
	return res, nil
}

func request(t *testing.T, labels map[string]string) string {
	t.Helper()
	b, err := json.Marshal(&types.Request{Version: "0.1", ID: "c1", SandboxID: "c1", State: types.Create, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func runSkel(t *testing.T, args []string, in string) (*types.Result, error) {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), echo{}, args, strings.NewReader(in), &out); err != nil {
		return nil, err
	}
	var res types.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("result %q: %v", out.String(), err)
	}
	return &res, nil
}

func TestRun(t *testing.T) {
	t.Run("invoke returns the plugin's result", func(t *testing.T) {
		res, err := runSkel(t, []string{"p", "invoke"}, request(t, map[string]string{"a": "b"}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Plugin != "echo" || res.Version != "0.1" || res.Error != "" || res.Metadata["a"] != "b" {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("a failed invoke reports the error in a fresh result", func(t *testing.T) {
		res, err := runSkel(t, []string{"p", "invoke"}, request(t, map[string]string{"fail": "no way"}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Plugin != "echo" || res.Error != "no way" || res.Metadata["ignored"] != "" || res.Err() == nil {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("an unknown command is reported in the result", func(t *testing.T) {
		res, err := runSkel(t, []string{"p", "frobnicate"}, request(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		if res.Plugin != "echo" || res.Error != "invalid arg frobnicate" {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("a missing command is reported in the result", func(t *testing.T) {
		res, err := runSkel(t, []string{"p"}, request(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		if res.Error != "invalid arg " {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("an unreadable request is Run's error", func(t *testing.T) {
		if _, err := runSkel(t, []string{"p", "invoke"}, "{"); err == nil {
			t.Fatal("no error")
		}
	})
}

// TestRunAsAPlugin runs this test binary as a v0.1 plugin, the way the
// runtime does (the root package's client): the command in its arguments,
// the request on stdin, the result read from stdout.
func TestRunAsAPlugin(t *testing.T) {
	cmd := exec.Command(os.Args[0], "invoke")
	cmd.Env = append(os.Environ(), "SKEL_TEST_PLUGIN=1")
	cmd.Stdin = strings.NewReader(request(t, map[string]string{"x": "y"}))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("plugin: %v", err)
	}
	var res types.Result
	if err := json.Unmarshal(out, &res); err != nil || res.Metadata["x"] != "y" {
		t.Fatalf("result %q: %v", out, err)
	}
}

func TestMain(m *testing.M) {
	if os.Getenv("SKEL_TEST_PLUGIN") == "1" {
		if err := Run(context.Background(), echo{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
