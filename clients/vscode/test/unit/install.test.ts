import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type InstallRecord, bootstrapPythons, compareVersions, isInstallRecord, noPython, parseEvent, updateAvailable, wheelVersion } from '../../src/core/install';

const record = (version: string): InstallRecord => ({ version, venv: `venv-${version}-1`, identity: 'wheel:x' });

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
});

describe('the bootstrap', () => {
  it('reads its JSON lines and nothing else', () => {
    assert.deepEqual(parseEvent('{"event": "step", "step": "pip", "message": "installing server 0.1.0"}'), {
      event: 'step',
      step: 'pip',
      message: 'installing server 0.1.0',
    });
    assert.equal(parseEvent('Traceback (most recent call last):'), undefined);
    assert.equal(parseEvent('{"no": "event"}'), undefined);
  });
  it('takes records of the bootstrap and of this extension before it', () => {
    assert.ok(isInstallRecord({ version: '0.1.0', venv: 'venv-0.1.0-1', identity: 'wheel:x' }));
    assert.ok(isInstallRecord({ version: '0.1.0', venv: 'venv-0.1.0-1', wheel: 'w.whl', sha256: 'x' }));
    assert.equal(isInstallRecord({ venv: 'v' }), false);
  });
  it('says what to install when there is no Python to run it', () => {
    const { message, fix } = noPython(['python3', 'python']);
    assert.match(message, /Python 3\.11 or newer, and none was found \(tried python3, python\)/);
    assert.equal(fix, 'sudo apt install python3 python3-venv');
  });
  it('runs the bootstrap with each platform\'s Python and says each platform\'s fix', () => {
    assert.deepEqual(bootstrapPythons('win32'), [['py', '-3'], ['python'], ['python3']]);
    assert.deepEqual(bootstrapPythons('darwin', '/opt/homebrew/bin/python3'), [['/opt/homebrew/bin/python3'], ['python3'], ['/usr/local/bin/python3'], ['python']]);
    assert.deepEqual(bootstrapPythons('linux', '/venv/bin/python'), [['/venv/bin/python'], ['python3'], ['python']]);
    const win = noPython(['py -3', 'python', 'python3'], 'win32');
    assert.equal(win.fix, 'winget install Python.Python.3.13');
    assert.match(win.message, /tried py -3, python, python3\)/);
    assert.doesNotMatch(win.message, /apt/);
    assert.equal(noPython(['python3'], 'darwin').fix, 'brew install python@3.13');
  });
});
