"""README's set-up commands are the only set-up there is: CI runs the test command literally."""
import re
from pathlib import Path

ROOT = Path(__file__).parents[1]


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_ci_runs_readmes_test_command_literally():
    commands = readme_commands()
    tests = [c for c in commands if "pytest" in c]
    assert len(tests) == 1, commands
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests[0] in ci


def test_readme_main_command_runs_the_bench():
    assert any(c.rstrip().endswith("stridewise bench --quick") for c in readme_commands())
