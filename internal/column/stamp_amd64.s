//go:build amd64 && !purego

#include "textflag.h"

// AVX2 kernels of the copy strategy's load (see stamp.go). Each one
// overwrites dst with src and sets ticks[i] = now for every value i whose
// bytes differ, for whole groups of values:
//
//	func kernel(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)
//
// Registers: DI dst, SI src, DX ticks, CX groups left, Y7 now in every lane.
// Groups whose bytes are all equal are neither stored nor stamped.
//
// Once the values outgrow the caches the loops are bound by memory bandwidth,
// and prefetching pf bytes ahead in every stream (R11 in the value streams,
// R12 in the tick stream) keeps enough loads in flight; for smaller loads the
// caller passes pf = 0 and the prefetches are skipped, as they only cost
// issue slots there.

// STAMP4 sets the ticks at off(DX) to now where the 4-bit mask in AX (bit i:
// value i differs) is set. Clobbers AX, Y6, Y8.
#define STAMP4(off) \
	SHLQ      $5, AX; \
	VMOVDQU   (R9)(AX*1), Y6; \
	VMOVDQU   off(DX), Y8; \
	VPBLENDVB Y6, Y7, Y8, Y8; \
	VMOVDQU   Y8, off(DX)

#define PROLOGUE \
	MOVQ         dst+0(FP), DI; \
	MOVQ         src+8(FP), SI; \
	MOVQ         ticks+16(FP), DX; \
	MOVQ         groups+24(FP), CX; \
	VPBROADCASTQ now+40(FP), Y7; \
	MOVQ         pf+48(FP), R11; \
	MOVQ         R11, R12; \
	LEAQ         ·stampMasks(SB), R9

// func loadQ1(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)
// 8-byte values, 4 per group.
TEXT ·loadQ1(SB), NOSPLIT, $0-56
	PROLOGUE
	TESTQ CX, CX
	JZ    q1done

q1loop:
	TESTQ R11, R11
	JZ    q1loopgo
	PREFETCHT0 (SI)(R11*1)
	PREFETCHT0 (DI)(R11*1)
	PREFETCHT0 (DX)(R12*1)

q1loopgo:
	VMOVDQU   (SI), Y0
	VPCMPEQQ  (DI), Y0, Y3
	VMOVMSKPD Y3, AX
	CMPQ      AX, $15
	JEQ       q1next
	VMOVDQU   Y0, (DI)
	VMOVDQU   (DX), Y8
	VPBLENDVB Y3, Y8, Y7, Y8 // equal ? tick : now
	VMOVDQU   Y8, (DX)

q1next:
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ  q1loop

q1done:
	VZEROUPPER
	RET

// func loadQ2(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)
// 16-byte values, 4 per group; lut2 maps the 8 word-equality bits to the 4
// value-difference bits.
TEXT ·loadQ2(SB), NOSPLIT, $0-56
	PROLOGUE
	SHRQ  $1, R12 // ticks advance half as fast as values
	LEAQ  ·lut2(SB), R8
	TESTQ CX, CX
	JZ    q2done

q2loop:
	TESTQ R11, R11
	JZ    q2loopgo
	PREFETCHT0 (SI)(R11*1)
	PREFETCHT0 32(SI)(R11*1)
	PREFETCHT0 (DI)(R11*1)
	PREFETCHT0 32(DI)(R11*1)
	PREFETCHT0 (DX)(R12*1)

q2loopgo:
	VMOVDQU   (SI), Y0
	VMOVDQU   32(SI), Y1
	VPCMPEQQ  (DI), Y0, Y3
	VPCMPEQQ  32(DI), Y1, Y4
	VMOVMSKPD Y3, AX
	VMOVMSKPD Y4, BX
	SHLQ      $4, BX
	ORQ       BX, AX
	MOVBQZX   (R8)(AX*1), AX
	TESTQ     AX, AX
	JZ        q2next
	VMOVDQU   Y0, (DI)
	VMOVDQU   Y1, 32(DI)
	STAMP4(0)

q2next:
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $32, DX
	DECQ CX
	JNZ  q2loop

q2done:
	VZEROUPPER
	RET

// func loadQ3(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)
// 24-byte values, 4 per group; lut3 maps the 12 word-equality bits to the 4
// value-difference bits.
TEXT ·loadQ3(SB), NOSPLIT, $0-56
	PROLOGUE
	SHRQ  $2, R12 // ticks advance a third as fast as values; a quarter is close enough
	LEAQ  ·lut3(SB), R8
	TESTQ CX, CX
	JZ    q3done

q3loop:
	TESTQ R11, R11
	JZ    q3loopgo
	PREFETCHT0 (SI)(R11*1)
	PREFETCHT0 32(SI)(R11*1)
	PREFETCHT0 64(SI)(R11*1)
	PREFETCHT0 (DI)(R11*1)
	PREFETCHT0 32(DI)(R11*1)
	PREFETCHT0 64(DI)(R11*1)
	PREFETCHT0 (DX)(R12*1)

q3loopgo:
	VMOVDQU   (SI), Y0
	VMOVDQU   32(SI), Y1
	VMOVDQU   64(SI), Y2
	VPCMPEQQ  (DI), Y0, Y3
	VPCMPEQQ  32(DI), Y1, Y4
	VPCMPEQQ  64(DI), Y2, Y5
	VMOVMSKPD Y3, AX
	VMOVMSKPD Y4, BX
	VMOVMSKPD Y5, R10
	SHLQ      $4, BX
	SHLQ      $8, R10
	ORQ       BX, AX
	ORQ       R10, AX
	MOVBQZX   (R8)(AX*1), AX
	TESTQ     AX, AX
	JZ        q3next
	VMOVDQU   Y0, (DI)
	VMOVDQU   Y1, 32(DI)
	VMOVDQU   Y2, 64(DI)
	STAMP4(0)

q3next:
	ADDQ $96, SI
	ADDQ $96, DI
	ADDQ $32, DX
	DECQ CX
	JNZ  q3loop

q3done:
	VZEROUPPER
	RET

// func loadD1(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)
// 4-byte values, 8 per group.
TEXT ·loadD1(SB), NOSPLIT, $0-56
	PROLOGUE
	SHLQ  $1, R12 // ticks advance twice as fast as values
	TESTQ CX, CX
	JZ    d1done

d1loop:
	TESTQ R11, R11
	JZ    d1loopgo
	PREFETCHT0 (SI)(R11*1)
	PREFETCHT0 (DI)(R11*1)
	PREFETCHT0 (DX)(R12*1)
	PREFETCHT0 32(DX)(R12*1)

d1loopgo:
	VMOVDQU      (SI), Y0
	VPCMPEQD     (DI), Y0, Y3
	VMOVMSKPS    Y3, AX
	CMPQ         AX, $0xff
	JEQ          d1next
	VMOVDQU      Y0, (DI)
	VPMOVSXDQ    X3, Y4       // equality of values 0-3 as 64-bit lanes
	VEXTRACTI128 $1, Y3, X5
	VPMOVSXDQ    X5, Y5       // values 4-7
	VMOVDQU      (DX), Y8
	VMOVDQU      32(DX), Y9
	VPBLENDVB    Y4, Y8, Y7, Y8 // equal ? tick : now
	VPBLENDVB    Y5, Y9, Y7, Y9
	VMOVDQU      Y8, (DX)
	VMOVDQU      Y9, 32(DX)

d1next:
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $64, DX
	DECQ CX
	JNZ  d1loop

d1done:
	VZEROUPPER
	RET

// func loadW(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)
// Values of at least 32 bytes, one per group, compared and copied in 32-byte
// chunks; the last chunk ends at the value's end and may overlap the one
// before it. It does not prefetch (pf is ignored).
TEXT ·loadW(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ticks+16(FP), DX
	MOVQ groups+24(FP), CX
	MOVQ size+32(FP), R10
	MOVQ now+40(FP), R13
	LEAQ -32(R10), R11    // offset of the last chunk
	TESTQ CX, CX
	JZ    wdone

wloop:
	VPCMPEQB Y5, Y5, Y5 // all ones
	XORQ     R12, R12

wcmp:
	CMPQ     R12, R11
	JAE      wlast
	VMOVDQU  (SI)(R12*1), Y0
	VPCMPEQB (DI)(R12*1), Y0, Y1
	VPAND    Y1, Y5, Y5
	ADDQ     $32, R12
	JMP      wcmp

wlast:
	VMOVDQU   (SI)(R11*1), Y0
	VPCMPEQB  (DI)(R11*1), Y0, Y1
	VPAND     Y1, Y5, Y5
	VPMOVMSKB Y5, AX
	CMPL      AX, $-1
	JEQ       wnext
	MOVQ      R13, (DX)
	XORQ      R12, R12

wcopy:
	CMPQ    R12, R11
	JAE     wcopylast
	VMOVDQU (SI)(R12*1), Y0
	VMOVDQU Y0, (DI)(R12*1)
	ADDQ    $32, R12
	JMP     wcopy

wcopylast:
	VMOVDQU (SI)(R11*1), Y0
	VMOVDQU Y0, (DI)(R11*1)

wnext:
	ADDQ R10, SI
	ADDQ R10, DI
	ADDQ $8, DX
	DECQ CX
	JNZ  wloop

wdone:
	VZEROUPPER
	RET

// func cpuAVX2() bool
// AVX2 supported by the CPU and its register state enabled by the OS.
TEXT ·cpuAVX2(SB), NOSPLIT, $0-1
	XORL  AX, AX
	CPUID
	CMPL  AX, $7
	JLT   no
	MOVL  $1, AX
	XORL  CX, CX
	CPUID
	ANDL  $0x18000000, CX // OSXSAVE (bit 27) and AVX (bit 28)
	CMPL  CX, $0x18000000
	JNE   no
	XORL  CX, CX
	XGETBV
	ANDL  $6, AX          // XMM and YMM state enabled
	CMPL  AX, $6
	JNE   no
	MOVL  $7, AX
	XORL  CX, CX
	CPUID
	BTL   $5, BX          // AVX2
	JCC   no
	MOVB  $1, ret+0(FP)
	RET

no:
	MOVB $0, ret+0(FP)
	RET
