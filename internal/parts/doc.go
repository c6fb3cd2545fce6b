// Package parts holds the per-type checksum part shared by snapshot (which
// computes them) and rollback (which exchanges and compares them), so both
// name the same type and compare parts the same way.
package parts
