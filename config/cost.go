package config

import "math"

// checkUSD refuses an amount of money that is negative or not a number; 0
// means "no limit" wherever a budget takes one.
func checkUSD(p *problems, source, field string, v float64) {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		p.add(source, field, "must be a non-negative amount of USD (got %g)", v)
	}
}
