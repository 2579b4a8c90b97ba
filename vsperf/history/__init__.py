"""The results store: every run recorded into a database, trends and change detection over it.

The run directory stays the source of truth: runs are recorded FROM their results.json
(`recorder`), live after each test and at the end of a run (`hook`) or later with
`vsperf history import` (`importer`). `db` opens a store (SQLite file by default, PostgreSQL for
a lab) and brings its schema up to date (`migrate`, Alembic); `query` reads series back, `trend`
classifies them with CSIT's jumpavg, `export` writes CSV/JSON and `dashboard` a static or live site.
"""
