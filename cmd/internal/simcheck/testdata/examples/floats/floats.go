// Package floats multiplies and adds floats in sim code.
package floats

//rewind:sim
func integrate(pos, vel, dt float64) float64 { // want integrate:"sim findings"
	pos = pos + vel*dt // want `note: float x\*y \+ z: Go may fuse it into one FMA`
	pos -= float64(vel*dt) + 0
	return pos
}
