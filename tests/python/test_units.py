"""test_units.py SOURCE_DIR - analysis/dcsim_units.py writes numbers in the
units people read: exact strings for chosen inputs (each derived by hand in
the comment beside it), zero, negatives, 1e-300, 1e300, NaN and infinities
("n/a"), and the ± of a 95 % interval with its digits set by the interval.
Run with Debian's /usr/bin/python3."""
import os
import sys
import unittest

SOURCE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../..")
sys.path.insert(0, os.path.join(SOURCE, "analysis"))
import dcsim_units as u  # noqa: E402

NAN, INF = float("nan"), float("inf")


class Units(unittest.TestCase):
    def cases(self, fn, table):
        for value, want in table:
            with self.subTest(fn=fn.__name__, value=value):
                self.assertEqual(fn(value), want)

    def test_durations(self):
        self.cases(u.duration, [
            (0, "0 s"), (0.0, "0 s"),
            (2.5e-6, "2.50 µs"),                  # 2.5e-6 s >= 1 µs
            (0.25, "250 ms"),
            (59, "59.0 s"),
            (90, "1.50 min"),                     # 90 / 60
            (5400, "1.50 h"),                     # 5400 / 3600
            (-3600, "-1.00 h"),                   # the sign, the ladder of |v|
            (7_148_160, "82.7 days"),             # 7148160 / 86400 = 82.733
            (1234.5 * 86400, "1,234 days"),       # above 1,000: all digits, half to even
            (9.996, "10.0 s"),                    # rounding carries: one decimal fewer
            (1e-300, "1.00e-300 s"),              # off the ladder: base unit, scientific
            (1e300, "1.00e+300 s"),
            (NAN, "n/a"), (INF, "n/a"), (-INF, "n/a"), (None, "n/a")])

    def test_energy_money_co2_rates(self):
        self.cases(u.energy, [
            (0, "0 kWh"),
            (3.6e6, "1.00 kWh"),                  # 1 kWh = 3.6 MJ
            (2.28698e13, "6.35 GWh"),             # the 2.28698e+13 J / 3.6e12
            (1e12, "278 MWh"),                    # 1e12 / 3.6e9 = 277.8
            (-7.2e9, "-2.00 MWh"),
            (1e-300, "1.00e-300 J"), (NAN, "n/a")])
        self.cases(u.money, [
            (0, "0 CNY"), (950, "950 CNY"), (1.23e6, "1.23 M CNY"),
            (-4.5e5, "-450 k CNY"),               # a saving
            (2.5e9, "2.50 bn CNY"), (1e300, "1.00e+300 CNY"), (NAN, "n/a")])
        self.assertEqual(u.money(1.5e6, "USD"), "1.50 M USD")   # the data's currency
        self.cases(u.co2, [
            (0, "0 kg CO2"), (3.2e7, "32.0 kt CO2"), (1500, "1.50 t CO2"),
            (0.5, "500 g CO2"), (NAN, "n/a")])
        self.cases(u.rate, [
            (0, "0 GB/s"), (4e11, "400 GB/s"), (5e10, "50.0 GB/s"), (1.6e12, "1.60 TB/s")])

    def test_percent_and_counts(self):
        self.cases(u.percent, [
            (0, "0 %"), (0.4213, "42.1 %"), (1, "100 %"), (0.99999, "100 %"),
            (-0.05, "-5.00 %"), (1e-300, "1.00e-298 %"), (NAN, "n/a")])
        self.cases(u.count, [
            (0, "0"), (16384, "16,384"), (-3, "-3"), (1e300, "1.00e+300"), (NAN, "n/a")])

    def test_human_dispatches_on_unit_and_key(self):
        cases = [((7_148_160, "s", "time_to_train_s"), "82.7 days"),
                 ((0.9123, "1", "ettr_frac"), "91.2 %"),
                 ((1.123, "1", "pue_frac"), "1.12"),       # a ratio, not a share
                 ((412, "1", "failures"), "412"),
                 ((2.28698e13, "J", "it_energy_j"), "6.35 GWh"),
                 ((3.5e7, "W", "peak_facility_power_w"), "35.0 MW"),
                 ((3.2e7, "kg", "co2_kg"), "32.0 kt CO2"),
                 ((1.23e6, "CNY", "energy_cost_cny"), "1.23 M CNY"),
                 ((4.2e11, "B", "checkpoint_size_bytes"), "420 GB"),
                 ((5e3, "GPU h", "rework_gpu_hours"), "5.00 k GPU-hours"),
                 ((0.35, "CNY/kWh", "price_cny_per_kwh"), "0.350 CNY/kWh"),
                 ((NAN, "s", "time_to_train_s"), "n/a")]
        for args, want in cases:
            with self.subTest(args=args):
                self.assertEqual(u.human(*args), want)

    def test_plus_minus(self):
        cases = [
            # CI 39,744 s = 0.46 days (2 digits); mean 82.733 days to 2 decimals
            ((7_148_160, 39_744, "s", None), "82.73 ± 0.46 days"),
            # 91.23 % ± 1.23 %: CI 1.2, mean to one decimal
            ((0.9123, 0.0123, "1", "ettr_frac"), "91.2 ± 1.2 %"),
            ((1.234e7, 5.6e5, "CNY", None), "12.34 ± 0.56 M CNY"),
            # a CI of 7,890 rounds to 7,900 (2 digits): the mean to hundreds
            ((123_456, 7_890, "1", "failures"), "123,500 ± 7,900"),
            # 9.97 s rounds up to 10 at 2 digits: one decimal fewer
            ((100, 9.97, "s", None), "1.67 ± 0.17 min"),
            ((50, 9.97, "s", None), "50 ± 10 s"),
            ((-2.5e9, 4.1e7, "CNY", None), "-2.500 ± 0.041 bn CNY"),
            ((5, 0, "s", None), "5.00 s"),            # no spread: the mean alone
            ((5, NAN, "s", None), "5.00 s"),          # one replica
            ((NAN, 1, "s", None), "n/a"),
            ((1e300, 1e299, "s", None), "1.00e+300 ± 1.0e+299 s"),
            ((1e-300, 1e-301, "s", None), "1.00e-300 ± 1.0e-301 s")]
        for args, want in cases:
            with self.subTest(args=args):
                self.assertEqual(u.plus_minus(*args), want)

    def test_labels(self):
        self.assertEqual(u.label("time_to_train_s"), "time to train")
        self.assertEqual(u.label("co2_kg"), "CO2")
        self.assertEqual(u.label("something_new_s"), "something new")   # derived
        self.assertEqual(u.label("ettr_frac_mean"), "ettr frac mean")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
