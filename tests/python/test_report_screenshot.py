"""test_report_screenshot.py DCSIM SOURCE_DIR - headless Chromium (Debian's
chromium package) renders the HTML report of `dcsim report` with its figures:
analysis/screenshot_report.sh takes a screenshot, and the test finds the
figures' colours in it (the Okabe-Ito palette of analysis/dcsim_figures.py,
which no text or table in the report uses), while a screenshot of the same
report with its <img> elements removed has none. Exit status 77 (skipped)
when chromium is not installed. Run with Debian's /usr/bin/python3."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

DCSIM = sys.argv[1]
SOURCE = sys.argv[2]
SCRIPT = os.path.join(SOURCE, "analysis", "screenshot_report.sh")
SKIPPED = 77
BROWSERS = ("chromium", "chromium-browser", "google-chrome")

import matplotlib.image  # noqa: E402
import numpy as np  # noqa: E402

# dcsim_figures' BLUE, ORANGE, GREEN as 0-255 RGB
PALETTE = {"blue": (0, 114, 178), "orange": (230, 159, 0), "green": (0, 158, 115)}
TOLERANCE = 24            # per channel, for anti-aliasing at the edges
WIDTH, HEIGHT = 1200, 5000


def colour_pixels(png, rgb):
    image = matplotlib.image.imread(png)[:, :, :3]
    if image.dtype != np.uint8:
        image = np.rint(image * 255).astype(np.int16)
    diff = np.abs(image.astype(np.int16) - np.array(rgb, dtype=np.int16))
    return int(np.sum(np.all(diff <= TOLERANCE, axis=2)))


class Screenshot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.dir = cls.tmp.name
        trace = os.path.join(d, "run.h5")
        subprocess.run([DCSIM, "run", "--quiet", "-o", trace], check=True, capture_output=True)
        cls.report = os.path.join(d, "report.html")
        subprocess.run([DCSIM, "report", trace, "-o", cls.report], check=True,
                       capture_output=True)
        with open(cls.report, encoding="utf-8") as f:
            text = f.read()
        cls.images = text.count("<img ")
        cls.bare = os.path.join(d, "bare.html")
        with open(cls.bare, "w", encoding="utf-8") as f:
            f.write(re.sub(r"<img [^>]*>", "", text))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def shoot(self, html, name):
        png = os.path.join(self.dir, name)
        r = subprocess.run(["sh", SCRIPT, html, png, str(WIDTH), str(HEIGHT)],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        return png

    def test_screenshot_shows_the_figures(self):
        # the default trace: the time breakdown, the campaign timeline, the step
        # tier's pipeline timeline and tier utilisation, the site's hourly energy
        self.assertEqual(self.images, 5)
        shot = self.shoot(self.report, "report.png")
        image = matplotlib.image.imread(shot)
        self.assertEqual(image.shape[:2], (HEIGHT, WIDTH))
        bare = self.shoot(self.bare, "bare.png")
        for name, rgb in PALETTE.items():
            with self.subTest(colour=name):
                # the time breakdown's bars and the campaign timeline's marks
                self.assertGreater(colour_pixels(shot, rgb), 100, name)
                self.assertEqual(colour_pixels(bare, rgb), 0, name)

    def test_bad_arguments(self):
        r = subprocess.run(["sh", SCRIPT, os.path.join(self.dir, "missing.html"),
                            os.path.join(self.dir, "x.png")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no such file", r.stderr)
        r = subprocess.run(["sh", SCRIPT], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage:", r.stderr)


if __name__ == "__main__":
    if not any(shutil.which(b) for b in BROWSERS):
        print("SKIP: no chromium (Debian: apt install chromium)")
        sys.exit(SKIPPED)
    unittest.main(argv=sys.argv[:1], verbosity=2)
