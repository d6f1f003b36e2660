package generate

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"

	nri "github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/ocigen"
)

const mountinfo = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
23 22 0:5 / /dev rw,nosuid master:7 - devtmpfs udev rw
24 22 8:2 / /data rw,relatime - ext4 /dev/sda2 rw
25 24 8:3 / /data/shared rw shared:9 master:3 - ext4 /dev/sda3 rw
26 22 8:4 / /mnt/with\040space rw master:4 - ext4 /dev/sda4 rw
27 22 8:5 / /data rw,relatime shared:12 - ext4 /dev/sda5 rw
garbage line
`

func TestPropagationOf(t *testing.T) {
	for path, want := range map[string]string{
		"/":                     "rshared",
		"/usr/bin":              "rshared",
		"/dev/shm":              "rslave",
		"/data/x":               "", // the first of two mounts at /data
		"/data/shared/a":        "rshared",
		"/mnt/with space/file":  "rslave",
		"/devices/x":            "rslave", // a plain string prefix of /dev, as upstream
		"/data/shared/../x/../": "",
	} {
		got, err := propagationOf(path, strings.NewReader(mountinfo))
		if err != nil || got != want {
			t.Errorf("propagation of %s: %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := propagationOf("relative", strings.NewReader(mountinfo)); err == nil {
		t.Error("a path under no mount point has a propagation")
	}
}

func TestHostPropagation(t *testing.T) {
	if hostPropagation == nil {
		t.Skip("no mountinfo on this platform")
	}
	if _, err := hostPropagation("/"); err != nil {
		t.Fatalf("propagation of /: %v", err)
	}
}

// mountGenerator returns a generator whose host reports prop for every
// path, recording the paths it was asked about.
func mountGenerator(spec *rspec.Spec, prop string, err error) (*Generator, *[]string) {
	var asked []string
	g := SpecGenerator(ocigen.New(spec))
	g.propagation = func(path string) (string, error) {
		asked = append(asked, path)
		return prop, err
	}
	return g, &asked
}

func TestMountPropagation(t *testing.T) {
	bind := func(dest string, opts ...string) *nri.Mount {
		return &nri.Mount{Destination: dest, Source: "/src" + dest, Type: "bind", Options: opts}
	}
	for _, tc := range []struct {
		name     string
		root     string // rootfs propagation before
		host     string // propagation of every source on the host
		hostErr  error
		mounts   []*nri.Mount
		wantRoot string
		wantErr  string
		asked    string
	}{
		{name: "rshared on a shared source", host: "rshared", mounts: []*nri.Mount{bind("/a", "rshared")}, wantRoot: "rshared", asked: "/src/a"},
		{name: "rshared on a slave source", host: "rslave", mounts: []*nri.Mount{bind("/a", "rshared")},
			wantErr: `failed to adjust mounts in OCI Spec: path "/src/a" mount propagation is "rslave", not "rshared"`, asked: "/src/a"},
		{name: "rslave on a slave source", host: "rslave", mounts: []*nri.Mount{bind("/a", "rslave")}, wantRoot: "rslave", asked: "/src/a"},
		{name: "rslave keeps an rshared rootfs", root: "rshared", host: "rshared", mounts: []*nri.Mount{bind("/a", "rslave")}, wantRoot: "rshared", asked: "/src/a"},
		{name: "rslave on a private source", host: "", mounts: []*nri.Mount{bind("/a", "rslave")},
			wantErr: `failed to adjust mounts in OCI Spec: path "/src/a" mount propagation is "", not "rshared or rslave"`, asked: "/src/a"},
		{name: "rprivate needs nothing", host: "", root: "rprivate", mounts: []*nri.Mount{bind("/a", "rprivate")}, wantRoot: "rprivate"},
		{name: "the option carries over to later mounts", host: "rslave",
			mounts: []*nri.Mount{bind("/a", "rslave"), bind("/b")}, wantRoot: "rslave", asked: "/src/a /src/b"},
		{name: "host lookup failing", hostErr: errors.New("no mountinfo"), mounts: []*nri.Mount{bind("/a", "rshared")},
			wantErr: "failed to adjust mounts in OCI Spec: no mountinfo", asked: "/src/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &rspec.Spec{Linux: &rspec.Linux{RootfsPropagation: tc.root}}
			g, asked := mountGenerator(spec, tc.host, tc.hostErr)
			err := g.AdjustMounts(tc.mounts)
			if got := fmt.Sprint(err); tc.wantErr != "" && got != tc.wantErr || tc.wantErr == "" && err != nil {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if a := strings.Join(*asked, " "); a != tc.asked {
				t.Errorf("asked about %q, want %q", a, tc.asked)
			}
			if tc.wantErr == "" && spec.Linux.RootfsPropagation != tc.wantRoot {
				t.Errorf("rootfs propagation %q, want %q", spec.Linux.RootfsPropagation, tc.wantRoot)
			}
		})
	}
}
