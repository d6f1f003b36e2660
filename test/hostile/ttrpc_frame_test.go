package hostile

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/containerd/nri/pkg/net/multiplex"
	"github.com/containerd/ttrpc"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
)

// ttrpc v1.2 frame layout: a 10-byte header (payload length, stream id, both
// big-endian uint32, then a type byte and a flags byte) and the payload.
const (
	ttrpcHeaderLen    = 10
	ttrpcTypeResponse = 2
	ttrpcTypeData     = 3
)

// muxHeaderLen is the multiplex frame header: connection id and payload
// length, both big-endian uint32 (upstream's pkg/net/multiplex).
const muxHeaderLen = 8

// strayDataFrame is 18 bytes: a multiplex frame for the runtime service
// connection whose payload is a ttrpc DATA header, without data, for stream
// 1, which no request ever opened. ttrpc v1.2.7's server dereferenced the
// missing stream in its receive goroutine and took the whole process down.
func strayDataFrame() []byte {
	frame := binary.BigEndian.AppendUint32(nil, uint32(multiplex.RuntimeServiceConn))
	frame = binary.BigEndian.AppendUint32(frame, ttrpcHeaderLen)
	frame = binary.BigEndian.AppendUint32(frame, 0) // ttrpc payload length
	frame = binary.BigEndian.AppendUint32(frame, 1) // stream id: odd, as a client's
	return append(frame, ttrpcTypeData, 0)
}

// readMuxFrame reads one multiplex frame from conn.
func readMuxFrame(conn net.Conn) (multiplex.ConnID, []byte, error) {
	var hdr [muxHeaderLen]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return 0, nil, fmt.Errorf("read multiplex header: %w", err)
	}
	payload := make([]byte, binary.BigEndian.Uint32(hdr[4:]))
	if _, err := io.ReadFull(conn, payload); err != nil {
		return 0, nil, fmt.Errorf("read multiplex payload: %w", err)
	}
	return multiplex.ConnID(binary.BigEndian.Uint32(hdr[:4])), payload, nil
}

// servedPlugin records its synchronization and annotates the containers it
// is asked to create.
type servedPlugin struct {
	synced chan []*api.PodSandbox
}

func (p *servedPlugin) Synchronize(_ context.Context, pods []*api.PodSandbox, _ []*api.Container) ([]*api.ContainerUpdate, error) {
	p.synced <- pods
	return nil, nil
}

func (p *servedPlugin) CreateContainer(context.Context, *api.PodSandbox, *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return &api.ContainerAdjustment{Annotations: map[string]string{"hostile.test/served": "yes"}}, nil, nil
}

var _ = Describe("a ttrpc DATA frame for a stream that does not exist, before registration", func() {
	BeforeEach(func() {
		ignore := goleak.IgnoreCurrent()
		DeferCleanup(func() {
			Eventually(func() error { return goleak.Find(ignore) }).WithTimeout(10 * time.Second).Should(Succeed())
		})
	})

	It("gets an error on that stream, and the runtime survives and serves the next plugin", func() {
		rt := startRuntime()

		conn, err := net.Dial("unix", rt.Socket)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(conn.Close)
		frame := strayDataFrame()
		Expect(frame).To(HaveLen(18))
		_, err = conn.Write(frame)
		Expect(err).NotTo(HaveOccurred())

		By("reading the runtime's answer on the same stream")
		Expect(conn.SetReadDeadline(time.Now().Add(time.Minute))).To(Succeed())
		id, payload, err := readMuxFrame(conn)
		Expect(err).NotTo(HaveOccurred(), rt.Status)
		Expect(id).To(Equal(multiplex.RuntimeServiceConn))
		Expect(len(payload)).To(BeNumerically(">=", ttrpcHeaderLen))
		Expect(binary.BigEndian.Uint32(payload[4:8])).To(Equal(uint32(1)), "stream id")
		Expect(payload[8]).To(Equal(byte(ttrpcTypeResponse)))
		var resp ttrpc.Response
		Expect(proto.Unmarshal(payload[ttrpcHeaderLen:], &resp)).To(Succeed())
		Expect(codes.Code(resp.GetStatus().GetCode())).To(Equal(codes.InvalidArgument), "status %v", resp.GetStatus())

		By("connecting a plugin that registers properly")
		p := &servedPlugin{synced: make(chan []*api.PodSandbox, 1)}
		s, err := stub.New(p, stub.WithSocketPath(rt.Socket), stub.WithPluginName("survivor"), stub.WithPluginIdx("10"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Stop)
		Expect(s.Start(context.Background())).To(Succeed(), rt.Status)

		var pods []*api.PodSandbox
		Eventually(p.synced).Should(Receive(&pods), rt.Status)
		Expect(pods).To(HaveLen(1))
		Expect(pods[0].GetId()).To(Equal(seededPod))
		Expect(rt.CreateContainer(seededPod, "ctr-1")).To(HaveKeyWithValue("hostile.test/served", "yes"))

		By("stopping the runtime, which must exit cleanly")
		s.Stop()
		Expect(rt.Stop()).To(Succeed(), rt.Status)
	})
})
