"""The panel: its file (`file`: models, judge, suites and their sources, store, engines, checked
as it loads), its YAML read into plain data whatever the file holds (`reading`), the names that
point to one (`ref`: a path, a file:// or s3:// URI, `bundled:NAME`), and the panels that ship
with roadeval (`bundled/`)."""
