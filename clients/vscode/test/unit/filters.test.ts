import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NO_FILTERS, filterSummary, fromKeys, parseToolList, toWireFilters } from '../../src/core/filters';

describe('search filters', () => {
  it('sends nothing when nothing is set', () => {
    assert.equal(toWireFilters(NO_FILTERS), undefined);
    assert.equal(filterSummary(NO_FILTERS), '');
  });
  it('maps picker keys to the protocol filters', () => {
    const f = fromKeys(['errors', 'branch', 'kind:tool.result', 'kind:bash.output', 'tool:bash']);
    assert.deepEqual(toWireFilters(f), {
      kind: ['tool.result', 'bash.output'],
      tool: ['bash'],
      errors: true,
      branchState: ['selected'],
    });
    assert.equal(filterSummary(f), 'errors only · selected branch · kind: tool.result, bash.output · tool: bash');
  });
  it('parses typed tool lists', () => {
    assert.deepEqual(parseToolList(' web_search, ,bash,web_search ', ['bash']), ['bash', 'web_search']);
    assert.deepEqual(parseToolList(undefined), []);
  });
});
