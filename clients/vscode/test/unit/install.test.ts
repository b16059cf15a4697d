import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type InstallRecord,
  type PythonProbe,
  choosePython,
  compareVersions,
  parseProbe,
  pipProgress,
  saysVenvMissing,
  updateAvailable,
  venvDirName,
  wheelVersion,
} from '../../src/core/install';

const record = (version: string): InstallRecord => ({
  version,
  wheel: `pi_event_search-${version}-py3-none-any.whl`,
  sha256: 'x',
  venv: `venv-${version}-1`,
  basePython: '/usr/bin/python3',
  pythonVersion: '3.11.2',
  installedAt: '2026-01-01T00:00:00Z',
});

const py = (version: [number, number, number], venv = true, ensurepip = true): PythonProbe => ({
  executable: `/usr/bin/python${version[0]}.${version[1]}`,
  version,
  venv,
  ensurepip,
});

describe('versions', () => {
  it('reads the version from the wheel name', () => {
    assert.equal(wheelVersion('pi_event_search-0.1.0-py3-none-any.whl'), '0.1.0');
    assert.equal(wheelVersion('pi_event_search-1.2rc1-py3-none-any.whl'), '1.2rc1');
    assert.equal(wheelVersion('other-0.1.0-py3-none-any.whl'), undefined);
  });
  it('orders releases, pre-releases and dev releases', () => {
    assert.ok(compareVersions('0.2.0', '0.1.9') > 0);
    assert.ok(compareVersions('0.10.0', '0.9.0') > 0);
    assert.equal(compareVersions('1.0', '1.0.0'), 0);
    assert.ok(compareVersions('1.0rc1', '1.0') < 0);
    assert.ok(compareVersions('1.0a2', '1.0b1') < 0);
    assert.ok(compareVersions('1.0.dev3', '1.0a1') < 0);
    assert.ok(compareVersions('1.0.post1', '1.0') > 0);
  });
  it('offers an update only for a newer bundled wheel', () => {
    assert.equal(updateAvailable(record('0.1.0'), '0.2.0'), true);
    assert.equal(updateAvailable(record('0.1.0'), '0.1.0'), false);
    assert.equal(updateAvailable(record('0.3.0'), '0.2.0'), false);
    assert.equal(updateAvailable(undefined, '0.2.0'), false);
    assert.equal(updateAvailable(record('0.1.0'), undefined), false);
  });
  it('names each venv apart', () => {
    assert.equal(venvDirName('0.1.0', new Date('2026-12-03T05:50:17.123Z')), 'venv-0.1.0-20261203055017');
  });
});

describe('choosePython', () => {
  it('takes the first recent interpreter that can make a venv', () => {
    const c = choosePython([
      { name: 'ext', probe: py([3, 10, 4]) },
      { name: 'python3', probe: py([3, 12, 1]) },
      { name: 'python3.13', probe: py([3, 13, 0]) },
    ]);
    assert.ok(c.ok && c.name === 'python3');
  });
  it('says exactly how to get venv on Debian', () => {
    const c = choosePython([{ name: 'python3', probe: py([3, 11, 2], true, false) }]);
    assert.ok(!c.ok);
    assert.equal(c.fix, 'sudo apt install python3.11-venv');
    assert.match(c.message, /Python 3\.11\.2 \(\/usr\/bin\/python3\.11\) cannot create virtual environments/);
  });
  it('names what it found when everything is too old, or that nothing was found', () => {
    const old = choosePython([{ name: 'python3', probe: py([3, 9, 2]) }]);
    assert.ok(!old.ok && /needs Python 3\.11 or newer; found only 3\.9\.2/.test(old.message));
    const none = choosePython([{ name: 'python3', probe: undefined }]);
    assert.ok(!none.ok && /none was found \(tried python3\)/.test(none.message));
  });
  it('parses the probe and recognises a missing ensurepip after the fact', () => {
    const p = parseProbe('{"executable": "/usr/bin/python3", "version": [3, 11, 2], "venv": true, "ensurepip": false}\n');
    assert.deepEqual(p, { executable: '/usr/bin/python3', version: [3, 11, 2], venv: true, ensurepip: false });
    assert.equal(parseProbe('garbage'), undefined);
    assert.ok(saysVenvMissing('The virtual environment was not created successfully because ensurepip is not available.'));
    assert.ok(!saysVenvMissing('Permission denied'));
  });
});

describe('pipProgress', () => {
  it('turns pip lines into short messages', () => {
    assert.equal(pipProgress('Processing /ext/server-wheel/pi_event_search-0.1.0-py3-none-any.whl'), 'reading the bundled server wheel');
    assert.equal(pipProgress('Collecting pygls<3,>=2.0 (from pi-event-search==0.1.0)'), 'resolving pygls');
    assert.equal(pipProgress('  Downloading orjson-3.10.0-cp311-manylinux_2_17_x86_64.whl (140 kB)'), 'downloading orjson');
    assert.equal(pipProgress('Installing collected packages: attrs, pygls'), 'installing the packages');
    assert.equal(pipProgress('  Using cached attrs-25.1.0-py3-none-any.whl'), undefined);
  });
});
