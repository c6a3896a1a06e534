"""Results as output (text, JSON, SARIF, JUnit, GitHub), and text made safe for each medium."""
