package v1

import (
	"encoding/json"
	"testing"
)

// The JSON names are the v0.1 protocol between runtime and plugin.
func TestWireNames(t *testing.T) {
	req := &Request{Conf: json.RawMessage(`{}`), Version: "0.1", State: Create, ID: "c", SandboxID: "c", Pid: 1,
		Spec:    &Spec{Resources: json.RawMessage(`null`), Namespaces: map[string]string{"pid": ""}, CgroupsPath: "/c", Annotations: map[string]string{"a": "b"}},
		Labels:  map[string]string{"l": "v"},
		Results: []*Result{{Plugin: "p", Version: "0.1", Error: "e", Metadata: map[string]string{"m": "n"}}}}
	got, _ := json.Marshal(req)
	want := `{"conf":{},"version":"0.1","state":"create","id":"c","sandboxID":"c","pid":1,` +
		`"spec":{"resources":null,"namespaces":{"pid":""},"cgroupsPath":"/c","annotations":{"a":"b"}},` +
		`"labels":{"l":"v"},"results":[{"plugin":"p","version":"0.1","error":"e","metadata":{"m":"n"}}]}`
	if string(got) != want {
		t.Fatalf("request JSON\n%s\nwant\n%s", got, want)
	}
	conf := ConfigList{}
	if err := json.Unmarshal([]byte(`{"version":"0.1","plugins":[{"type":"x","conf":{"y":1}}]}`), &conf); err != nil ||
		conf.Plugins[0].Type != "x" || string(conf.Plugins[0].Conf) != `{"y":1}` {
		t.Fatalf("config %+v, %v", conf, err)
	}
}

func TestRequestHelpers(t *testing.T) {
	r := &Request{ID: "a", SandboxID: "a", Version: "0.1"}
	if !r.IsSandbox() {
		t.Error("a request with ID == SandboxID is not a sandbox")
	}
	if (&Request{ID: "a", SandboxID: "b"}).IsSandbox() {
		t.Error("a container request is a sandbox")
	}
	res := r.NewResult("p")
	if res.Plugin != "p" || res.Version != "0.1" || res.Metadata == nil || res.Err() != nil {
		t.Errorf("new result %+v", res)
	}
	res.Error = "bad"
	if res.Err() == nil || res.Err().Error() != "bad" {
		t.Errorf("error %v", res.Err())
	}
}
