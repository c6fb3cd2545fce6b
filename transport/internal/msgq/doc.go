// Package msgq holds the queue machinery shared by the conns of package
// transport and its QUIC implementation: a growable ring FIFO, the receive
// queue of the message conns that enforces the reliable and unreliable
// caps, and the Signal and Wait loop behind every WaitReceive and
// MemoryListener.Accept (the datagram conns' receive queue, a ring of
// recycled buffers in package transport, wakes its waiters through a
// Signal too).
//
// Nothing here locks: the owner of a queue guards it.
package msgq
