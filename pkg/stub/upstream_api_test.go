package stub_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
	nrilog "github.com/nri-handover/nri/pkg/log"
	"github.com/nri-handover/nri/pkg/stub"
)

// upstreamStubMock is written as a mock of upstream's stub.Stub
// (containerd/nri v0.12.5) would be: exactly that interface's methods, with
// the logger typed as pkg/log's Logger. That it satisfies our Stub (checked at
// compile time below) keeps such mocks compiling against the stand-in
// module; anything we add to the stub belongs on HandoverStub.
type upstreamStubMock struct{}

func (upstreamStubMock) Run(context.Context) error   { return nil }
func (upstreamStubMock) Start(context.Context) error { return nil }
func (upstreamStubMock) Stop()                       {}
func (upstreamStubMock) Wait()                       {}
func (upstreamStubMock) UpdateContainers([]*api.ContainerUpdate) ([]*api.ContainerUpdate, error) {
	return nil, nil
}
func (upstreamStubMock) RegistrationTimeout() time.Duration { return 0 }
func (upstreamStubMock) RequestTimeout() time.Duration      { return 0 }
func (upstreamStubMock) Logger() nrilog.Logger              { return nrilog.Get() }
func (upstreamStubMock) RuntimeNRIVersion() string          { return "" }
func (upstreamStubMock) PluginNRIVersion() string           { return "" }

var _ stub.Stub = upstreamStubMock{}

// Our additions are on an interface of their own, which the stub New
// returns implements.
func TestNewReturnsHandoverStub(t *testing.T) {
	s, err := stub.New(examplePlugin{}, stub.WithPluginName("x"), stub.WithPluginIdx("01"),
		stub.WithLogger(stub.NewSlogLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))))
	if err != nil {
		t.Fatal(err)
	}
	hs, ok := s.(stub.HandoverStub)
	if !ok {
		t.Fatalf("%T is not a HandoverStub", s)
	}
	if hs.Name() != "01-x" {
		t.Errorf("Name() = %q", hs.Name())
	}
}
