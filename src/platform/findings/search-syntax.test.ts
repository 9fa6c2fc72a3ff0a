import { describe, expect, it } from 'vitest';
import { parseSearch } from './search-syntax.ts';

describe('parseSearch', () => {
  it('reads key:value tokens, comma lists, quoted values and free text', () => {
    expect(
      parseSearch(
        'status:new,confirmed severity:high label:"needs info" created_by:alice is:unread "exact phrase" word',
      ),
    ).toEqual({
      status: ['new', 'confirmed'],
      severity: ['high'],
      label: ['needs info'],
      createdBy: ['alice'],
      assignedTo: [],
      repository: [],
      path: [],
      unread: true,
      duplicate: false,
      text: ['exact phrase', 'word'],
    });
    expect(
      parseSearch('STATUS:fixed is:duplicate path:src/A.sol repository:core assigned_to:bob'),
    ).toMatchObject({
      status: ['fixed'],
      duplicate: true,
      path: ['src/A.sol'],
      repository: ['core'],
      assignedTo: ['bob'],
    });
    expect(parseSearch('   ').text).toEqual([]);
  });

  it('rejects unknown keys and values, empty values and open quotes, naming the field', () => {
    for (const bad of ['foo:bar', 'status:open', 'severity:urgent', 'is:new', 'label:', 'label:"x']) {
      expect(() => parseSearch(bad, 'filter'), bad).toThrow(/'filter'/);
    }
  });
});
