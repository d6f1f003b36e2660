package stub_test

import (
	"context"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/log"
	"github.com/containerd/nri/pkg/stub"
)

// mockStub is what a runtime's or plugin's test double of upstream's
// stub.Stub (v0.12.5) looks like, written against upstream's import paths:
// it must keep compiling against the stand-in.
type mockStub struct{}

func (mockStub) Run(context.Context) error   { return nil }
func (mockStub) Start(context.Context) error { return nil }
func (mockStub) Stop()                       {}
func (mockStub) Wait()                       {}
func (mockStub) UpdateContainers([]*api.ContainerUpdate) ([]*api.ContainerUpdate, error) {
	return nil, nil
}
func (mockStub) RegistrationTimeout() time.Duration { return stub.DefaultRegistrationTimeout }
func (mockStub) RequestTimeout() time.Duration      { return stub.DefaultRequestTimeout }
func (mockStub) Logger() log.Logger                 { return log.Get() }
func (mockStub) RuntimeNRIVersion() string          { return "unknown" }
func (mockStub) PluginNRIVersion() string           { return "unknown" }

var _ stub.Stub = mockStub{}
