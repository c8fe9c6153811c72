"""Where the project keeps its files. The project root is the checkout (installs are editable: `make setup`)."""

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent
SQL_DIR = PROJECT_ROOT / "sql"
SPECS_DIR = PACKAGE_DIR / "specs"
LOCAL_DIR = PROJECT_ROOT / ".local"  # machine-local state: embedded database, caches (git-ignored)
DAGSTER_HOME = PROJECT_ROOT / ".dagster_home"
RELEASES_DIR = PROJECT_ROOT / "releases"
