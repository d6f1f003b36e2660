package net

import (
	"fmt"
	stdnet "net"
	"os"
)

// SocketPair is a connected pair of unix stream sockets. A runtime keeps the
// local end and passes the peer end to a plugin it starts.
type SocketPair struct {
	local, peer *os.File
}

// NewSocketPair creates a connected pair whose descriptors are close-on-exec,
// so that only the child a runtime hands one to explicitly inherits it.
func NewSocketPair() (SocketPair, error) {
	fds, err := socketpairCloexec()
	if err != nil {
		return SocketPair{}, fmt.Errorf("failed to create socketpair: %w", err)
	}
	name := fmt.Sprintf("socketpair-#%d:%d", fds[0], fds[1])
	return SocketPair{
		local: os.NewFile(uintptr(fds[0]), name+"[0]"),
		peer:  os.NewFile(uintptr(fds[1]), name+"[1]"),
	}, nil
}

// LocalFile is the local end as a file.
func (sp SocketPair) LocalFile() *os.File { return sp.local }

// PeerFile is the peer end as a file, e.g. for exec.Cmd.ExtraFiles.
func (sp SocketPair) PeerFile() *os.File { return sp.peer }

// LocalConn turns the local end into a net.Conn and closes LocalFile (the
// connection holds its own duplicate of the descriptor).
func (sp SocketPair) LocalConn() (stdnet.Conn, error) { return fileConn(sp.local) }

// PeerConn turns the peer end into a net.Conn and closes PeerFile.
func (sp SocketPair) PeerConn() (stdnet.Conn, error) { return fileConn(sp.peer) }

// Close closes both ends' files.
func (sp SocketPair) Close() {
	sp.LocalClose()
	sp.PeerClose()
}

// LocalClose closes the local end's file.
func (sp SocketPair) LocalClose() { sp.local.Close() }

// PeerClose closes the peer end's file.
func (sp SocketPair) PeerClose() { sp.peer.Close() }

func fileConn(f *os.File) (stdnet.Conn, error) {
	defer f.Close()
	conn, err := stdnet.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("failed to create net.Conn for %s: %w", f.Name(), err)
	}
	return conn, nil
}
