package record

import "testing"

func TestFormatUSD(t *testing.T) {
	for usd, want := range map[float64]string{
		0:                    "$0.00",
		0.029849999999999998: "$0.03",
		0.0597:               "$0.06",
		0.5:                  "$0.50",
		12.345:               "$12.35",
		1234.5:               "$1234.50",
		0.01:                 "$0.01",
		0.0123:               "$0.01",
		0.004321:             "$0.004321",
		0.0043216:            "$0.004322",
		0.005:                "$0.005",
		0.00001234:           "$0.00001234",
		0.009996:             "$0.009996",
		0.0099996:            "$0.01", // a cent once rounded
	} {
		if got := FormatUSD(usd); got != want {
			t.Errorf("FormatUSD(%v) = %s, want %s", usd, got, want)
		}
	}
}
