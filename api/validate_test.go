package api

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestValidateRequestBuilders(t *testing.T) {
	req := &ValidateContainerAdjustmentRequest{}
	req.AddPlugin("logger", "10")
	req.AddPlugin("sidecar", "20")
	rpl := &CreateContainerResponse{
		Adjust: &ContainerAdjustment{Args: []string{"sh"}},
		Update: []*ContainerUpdate{{ContainerId: "c1"}},
	}
	req.AddResponse(rpl)
	owners := &OwningPlugins{}
	req.AddOwners(owners)

	want := &ValidateContainerAdjustmentRequest{
		Plugins: []*PluginInstance{{Name: "logger", Index: "10"}, {Name: "sidecar", Index: "20"}},
		Adjust:  rpl.Adjust,
		Update:  rpl.Update,
		Owners:  owners,
	}
	if !proto.Equal(req, want) {
		t.Fatalf("got %v, want %v", req, want)
	}

	m := req.GetPluginMap()
	for key, want := range map[string]*PluginInstance{
		"logger":     {Name: "logger"},
		"10-logger":  {Name: "logger", Index: "10"},
		"sidecar":    {Name: "sidecar"},
		"20-sidecar": {Name: "sidecar", Index: "20"},
	} {
		if !proto.Equal(m[key], want) {
			t.Errorf("GetPluginMap()[%q] = %v, want %v", key, m[key], want)
		}
	}
	if len(m) != 4 {
		t.Errorf("GetPluginMap() has %d entries, want 4", len(m))
	}
	if (*ValidateContainerAdjustmentRequest)(nil).GetPluginMap() != nil {
		t.Error("nil request should give a nil map")
	}
}

func TestValidationResult(t *testing.T) {
	for _, tc := range []struct {
		name string
		rsp  *ValidateContainerAdjustmentResponse
		want []string // substrings; nil means no error
	}{
		{"accepted", &ValidateContainerAdjustmentResponse{}, nil},
		{"accepted with reason", &ValidateContainerAdjustmentResponse{Reason: "fine"}, nil},
		{"rejected", &ValidateContainerAdjustmentResponse{Reject: true, Reason: "too big"}, []string{`"v1"`, "too big"}},
		{"rejected no reason", &ValidateContainerAdjustmentResponse{Reject: true}, []string{`"v1"`, "unknown rejection reason"}},
	} {
		err := tc.rsp.ValidationResult("v1")
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: unexpected error %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, s)
			}
		}
	}
}
