package adaptation

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation/builtin"
	validator "github.com/nri-handover/nri/plugins/default-validator/builtin"
)

// startWithBuiltins runs an adaptation with only builtin plugins.
func startWithBuiltins(t *testing.T, plugins ...*builtin.BuiltinPlugin) *Adaptation {
	t.Helper()
	dir := t.TempDir()
	sync := func(ctx context.Context, cb SyncCB) error { _, err := cb(ctx, nil, nil); return err }
	update := func(context.Context, []*ContainerUpdate) ([]*ContainerUpdate, error) { return nil, nil }
	r, err := New("validate-test", "v0", sync, update,
		WithDisabledExternalConnections(),
		WithPluginPath(filepath.Join(dir, "plugins")),
		WithPluginConfigPath(filepath.Join(dir, "conf")),
		WithBuiltinPlugins(plugins...))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := r.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(r.Stop)
	return r
}

// adjuster is a builtin plugin answering CreateContainer with adj.
func adjuster(idx, name string, adj func() *api.ContainerAdjustment) *builtin.BuiltinPlugin {
	return &builtin.BuiltinPlugin{Index: idx, Base: name, Handlers: builtin.BuiltinHandlers{
		CreateContainer: func(context.Context, *api.CreateContainerRequest) (*api.CreateContainerResponse, error) {
			return &api.CreateContainerResponse{Adjust: adj()}, nil
		},
	}}
}

func createContainer(r *Adaptation, annotations map[string]string) (*CreateContainerResponse, error) {
	return r.CreateContainer(context.Background(), &CreateContainerRequest{
		Pod:       &PodSandbox{Id: "pod", Name: "pod", Namespace: "ns", Annotations: annotations},
		Container: &Container{Id: "ctr", Name: "ctr", PodSandboxId: "pod"},
	})
}

func TestDefaultValidatorRejectsRestrictedAdjustments(t *testing.T) {
	hooks := adjuster("10", "hooks", func() *api.ContainerAdjustment {
		return &api.ContainerAdjustment{Hooks: &api.Hooks{Prestart: []*api.Hook{{Path: "/bin/true"}}}}
	})
	sysctl := adjuster("20", "sysctl", func() *api.ContainerAdjustment {
		return &api.ContainerAdjustment{Linux: &api.LinuxContainerAdjustment{Sysctl: map[string]string{"net.x": "1"}}}
	})

	r := startWithBuiltins(t, hooks, sysctl, validator.GetDefaultValidator(&validator.DefaultValidatorConfig{
		Enable:                  true,
		RejectOCIHookAdjustment: true,
	}))
	_, err := createContainer(r, nil)
	if err == nil || !strings.Contains(err.Error(), `plugin "10-hooks" injected OCI hooks`) {
		t.Fatalf("error = %v, want the hook injection rejected", err)
	}

	r = startWithBuiltins(t, sysctl, validator.GetDefaultValidator(&validator.DefaultValidatorConfig{
		Enable:                 true,
		RejectSysctlAdjustment: true,
	}))
	_, err = createContainer(r, nil)
	if err == nil || !strings.Contains(err.Error(), `plugin "20-sysctl" changed sysctls`) {
		t.Fatalf("error = %v, want the sysctl change rejected", err)
	}
}

func TestDefaultValidatorRequiredPlugins(t *testing.T) {
	noop := adjuster("10", "present", func() *api.ContainerAdjustment { return nil })
	r := startWithBuiltins(t, noop, validator.GetDefaultValidator(&validator.DefaultValidatorConfig{
		Enable:                    true,
		RequiredPlugins:           []string{"present"},
		TolerateMissingAnnotation: "tolerate-missing",
	}))

	if _, err := createContainer(r, nil); err != nil {
		t.Fatalf("required plugin present, but: %v", err)
	}
	required := map[string]string{validatorRequiredAnnotation + "/container.ctr": "[absent]"}
	_, err := createContainer(r, required)
	if err == nil || !strings.Contains(err.Error(), `required plugin "absent" not present`) {
		t.Fatalf("error = %v, want the missing plugin reported", err)
	}
	required["tolerate-missing/pod"] = "true"
	if _, err := createContainer(r, required); err != nil {
		t.Fatalf("missing plugin tolerated by annotation, but: %v", err)
	}
}

const validatorRequiredAnnotation = "required-plugins.noderesource.dev"
