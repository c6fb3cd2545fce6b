// Package column is the one per-type store history of rewind: saving a
// store's column (its entity layout and its values) with a memory copy,
// restoring it, and stamping exactly the values a restore changes. Package
// snapshot (the copy strategy of a Ring), package predict (a predicted
// type's history) and package replicate (checkpoints) keep their own frame
// bookkeeping on top of it; the kernels and the stamping rule live here
// only.
//
// The pieces:
//
//   - Plain is the copy strategy of a plain-data type (no pointers, see
//     internal/canon): its size and alignment, bit-for-bit comparison in
//     canonical form (Same), hashing of the canonical bytes (Hash), the
//     restore kernel (Stamp) and the re-save kernel (Patch).
//   - Layouts is a pool of saved entity layouts (Layout), shared by every
//     saved frame that holds the same layout: a history holds one copy of
//     an unchanged layout however deep it is.
//
// The stamping rule: a restore makes the live values equal to the saved
// ones and sets the change tick of exactly the values whose bytes it
// changes (Stamp); a strategy that cannot compare values (a clone or a
// codec) stamps every value written since the save (StampWritten). Values
// unwritten since the save hold their saved bytes, so both agree on them.
package column
