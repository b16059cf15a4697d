import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  commandFromSetting,
  describeCommand,
  expandPath,
  installHint,
  isPythonExecutable,
  pythonCandidates,
  runsServerModule,
  toInitializationOptions,
} from '../../src/core/settings';

const ctx = { folders: ['/work/proj', '/work/other'], home: '/home/me', env: { ARCHIVE: '/mnt/a' } };

describe('expandPath', () => {
  it('expands ~, variables and relative paths', () => {
    const cases: [string, string][] = [
      ['~', '/home/me'],
      ['~/x/y', '/home/me/x/y'],
      ['${workspaceFolder}/sub', '/work/proj/sub'],
      ['${userHome}/a', '/home/me/a'],
      ['${env:ARCHIVE}/s', '/mnt/a/s'],
      ['rel/dir', '/work/proj/rel/dir'],
      ['./rel', '/work/proj/rel'],
      ['/abs', '/abs'],
    ];
    for (const [given, expanded] of cases) assert.equal(expandPath(given, ctx), expanded, given);
  });
  it('leaves relative paths alone without a folder', () => {
    assert.equal(expandPath('rel', { folders: [], home: '/h' }), 'rel');
  });
});

describe('toInitializationOptions', () => {
  it('maps every setting to the protocol names', () => {
    assert.deepEqual(
      toInitializationOptions(
        { workspaceRoots: ['~/proj', 'sub'], sessionDirs: ['/mnt/archive', ''], indexPath: '~/idx.sqlite3', watch: false, serverCommand: ['x'], revealSecrets: true },
        ctx,
      ),
      { roots: ['/home/me/proj', '/work/proj/sub'], sessionDirs: ['/mnt/archive'], indexPath: '/home/me/idx.sqlite3', watch: false, revealSecrets: true, extractors: null },
    );
  });
  it('omits defaults so the server decides, but always says whether to reveal credentials', () => {
    // revealSecrets is always sent: a change back to false must reach a running server.
    assert.deepEqual(toInitializationOptions({ workspaceRoots: [], sessionDirs: [], indexPath: '', watch: undefined }, ctx), { revealSecrets: false, extractors: null });
    assert.deepEqual(toInitializationOptions({ workspaceRoots: 'x', sessionDirs: [1, null], indexPath: 3, revealSecrets: 'yes', extractors: { customType: 'x' } }, ctx), { revealSecrets: false, extractors: null });
  });
  it("sends a workspace's roots as configured, for the server to resolve and narrow", () => {
    // No check by text here: `evil -> /` inside the workspace passes any such check and is `/`
    // once resolved (issue 47). The server narrows (tests/lsp/test_paths_lsp.py).
    assert.deepEqual(toInitializationOptions({ projectRoots: ['sub', 'evil', '/work/proj/../../etc'] }, ctx).projectRoots,
      ['/work/proj/sub', '/work/proj/evil', '/work/proj/../../etc']);
    const both = toInitializationOptions({ workspaceRoots: ['/work'], projectRoots: ['/'] }, ctx);
    assert.deepEqual([both.roots, both.projectRoots], [['/work'], ['/']]);
    assert.equal(toInitializationOptions({}, ctx).projectRoots, undefined);
  });
  it('passes the extractor registry as is (the server checks it); unset: null, the user file', () => {
    const todo = { customType: 'todo-state', fields: ['title', 'items.*.text'], label: 'Todos' };
    assert.deepEqual(toInitializationOptions({ extractors: [todo] }, ctx).extractors, [todo]);
    assert.deepEqual(toInitializationOptions({ extractors: [] }, ctx).extractors, []);
    assert.equal(toInitializationOptions({ extractors: undefined }, ctx).extractors, null);
  });
});

describe('server command', () => {
  it('takes an array verbatim (first item expanded)', () => {
    assert.deepEqual(commandFromSetting(['~/venv/bin/pi-event-search', 'serve'], ctx), {
      command: '/home/me/venv/bin/pi-event-search',
      args: ['serve'],
    });
  });
  it('runs a python string as a module and anything else with serve', () => {
    assert.deepEqual(commandFromSetting('/v/bin/python3.11', ctx), { command: '/v/bin/python3.11', args: ['-m', 'pi_event_search', 'serve'] });
    assert.deepEqual(commandFromSetting('/v/bin/pi-event-search', ctx), { command: '/v/bin/pi-event-search', args: ['serve'] });
  });
  it('treats empty settings as unset', () => {
    assert.equal(commandFromSetting([], ctx), undefined);
    assert.equal(commandFromSetting('  ', ctx), undefined);
    assert.equal(commandFromSetting(undefined, ctx), undefined);
  });
  it('knows which commands run the server module', () => {
    assert.ok(runsServerModule({ command: '/v/bin/python', args: ['-m', 'pi_event_search', 'serve'] }));
    assert.ok(!runsServerModule({ command: '/v/bin/pi-event-search', args: ['serve'] }));
  });
  it('recognises interpreters', () => {
    for (const p of ['python', 'python3', '/usr/bin/python3.11', 'C:\\Py\\python.exe']) assert.ok(isPythonExecutable(p), p);
    for (const p of ['pi-event-search', '/bin/pythonista', 'py']) assert.ok(!isPythonExecutable(p), p);
  });
  it('orders candidates and explains the fix', () => {
    assert.deepEqual(pythonCandidates('/v/bin/python'), ['/v/bin/python', 'python3']);
    assert.deepEqual(pythonCandidates('python3'), ['python3']);
    assert.deepEqual(pythonCandidates(undefined), ['python3']);
    const hint = installHint(['/v/bin/python', 'python3']);
    assert.match(hint.message, /not installed for \/v\/bin\/python, python3/);
    assert.match(hint.message, /piEvents\.serverCommand/);
    assert.equal(hint.fix, '/v/bin/python -m pip install pi-event-search');
    assert.equal(describeCommand({ command: '/a b/py', args: ['-m', 'x'] }), '"/a b/py" -m x');
  });
});
