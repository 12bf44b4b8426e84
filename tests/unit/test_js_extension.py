"""The SillyTavern extension's own logic under Node's test runner (tests/js/*.test.mjs: seqs
that survive a delete, the outbox that waits out Annals, the prompt's first turn, session and
space names by the importers' rule), its locale files, and `annals sillytavern install`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from chalicelib.cli import main
from chalicelib.local.sillytavern import SOURCE

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_the_extensions_logic_passes_its_node_tests():
    tests = sorted(str(p) for p in (ROOT / "tests" / "js").glob("*.test.mjs"))
    out = subprocess.run([NODE, "--test", *tests], capture_output=True, text=True, timeout=120,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert re.search(r"^# pass [1-9]", out.stdout, re.M), out.stdout[-2000:]
    assert re.search(r"^# fail 0$", out.stdout, re.M)


def ui_strings() -> set[str]:
    """Every string the extension translates: tr("…") and the labels its panel passes."""
    source = "".join((SOURCE / name).read_text() for name in ("index.js", "panel.js"))
    found = set(re.findall(r'\btr\(\s*"([^"]+)"', source))
    found |= set(re.findall(r'field\("\w+",\s*"([^"]+)"', source))
    found |= set(re.findall(r'button\(\s*"([^"]+)"', source))
    found |= set(re.findall(r'\["\w+",\s*"([^"]+)"\]', source))
    return found


def test_every_ui_string_has_its_chinese_and_english_text():
    strings = ui_strings()
    assert {"Read now", "Open Annals", "Chronicle", "Last recall", "Annals URL"} <= strings
    for locale in ("zh-cn", "en"):
        data = json.loads((SOURCE / "i18n" / f"{locale}.json").read_text(encoding="utf-8"))
        missing = sorted(s for s in strings if s not in data)
        assert not missing, (locale, missing)
    manifest = json.loads((SOURCE / "manifest.json").read_text())
    assert manifest["i18n"] == {"en": "i18n/en.json", "zh-cn": "i18n/zh-cn.json"}
    assert manifest["generate_interceptor"] in (SOURCE / "index.js").read_text()


def fake_sillytavern(tmp_path: Path) -> Path:
    st = tmp_path / "SillyTavern"
    (st / "public" / "scripts" / "extensions").mkdir(parents=True)
    (st / "server.js").write_text("// SillyTavern\n")
    return st


def test_install_puts_the_extension_where_sillytavern_loads_a_users_extensions(tmp_path):
    st = fake_sillytavern(tmp_path)
    result = CliRunner().invoke(main, ["sillytavern", "install", "--st-dir", str(st),
                                       "--url", "http://127.0.0.1:8765", "--key", "ak_test"])
    assert result.exit_code == 0, result.output
    target = st / "data" / "default-user" / "extensions" / "annals"
    assert str(target) in result.output
    assert json.loads((target / "manifest.json").read_text())["js"] == "index.js"
    for name in ("index.js", "sync.js", "panel.js", "annals-client.js", "style.css",
                 "i18n/zh-cn.json"):
        assert (target / name).read_bytes() == (SOURCE / name).read_bytes(), name
    assert json.loads((target / "defaults.json").read_text()) == {
        "url": "http://127.0.0.1:8765", "key": "ak_test"}
    assert not (target / "README.md").exists()


def test_install_again_replaces_the_old_copy_whole_and_all_users_is_the_public_folder(tmp_path):
    st = fake_sillytavern(tmp_path)
    target = st / "data" / "alice" / "extensions" / "annals"
    target.mkdir(parents=True)
    (target / "stale.js").write_text("old")
    (target / "defaults.json").write_text("{}")
    runner = CliRunner()
    assert runner.invoke(main, ["sillytavern", "install", "--st-dir", str(st),
                                "--user", "alice"]).exit_code == 0
    assert not (target / "stale.js").exists() and not (target / "defaults.json").exists()
    assert (target / "index.js").is_file()
    assert [p.name for p in target.parent.iterdir()] == ["annals"], "no staging left behind"
    result = runner.invoke(main, ["sillytavern", "install", "--st-dir", str(st), "--all-users"])
    assert result.exit_code == 0, result.output
    assert (st / "public" / "scripts" / "extensions" / "third-party" / "annals"
            / "index.js").is_file()


def test_install_refuses_a_folder_that_is_not_sillytavern_and_a_bad_user(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["sillytavern", "install", "--st-dir", str(tmp_path)])
    assert result.exit_code != 0 and "is not a SillyTavern folder" in result.output
    st = fake_sillytavern(tmp_path)
    result = runner.invoke(main, ["sillytavern", "install", "--st-dir", str(st),
                                  "--user", "../etc"])
    assert result.exit_code != 0 and "not a SillyTavern user handle" in result.output
    assert not (st / "data").exists()
