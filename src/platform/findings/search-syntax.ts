import type { FindingStatus } from '../../access/rules.ts';
import { findingStatuses, severities } from '../../db/schema/index.ts';
import { AppError } from '../../errors.ts';
import { splitList } from '../pagination/list-params.ts';

type Severity = (typeof severities)[number];

/** Keys of the `s` search syntax (DESIGN §7); finding views store their filter in it too. */
export const SEARCH_KEYS = [
  'status',
  'severity',
  'label',
  'created_by',
  'assigned_to',
  'repository',
  'path',
  'is',
] as const;
type SearchKey = (typeof SEARCH_KEYS)[number];

/**
 * A parsed search string. Each key's values are alternatives (OR); different keys, `is:` flags and
 * free-text terms all have to hold (AND). A value may itself be a comma list (`status:new,confirmed`).
 */
export interface ParsedSearch {
  status: FindingStatus[];
  severity: Severity[];
  label: string[];
  createdBy: string[];
  assignedTo: string[];
  repository: string[];
  path: string[];
  unread: boolean;
  duplicate: boolean;
  /** Free-text terms; each must match the number, title or description. */
  text: string[];
}

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION_FAILED', {
    message: `Invalid query parameter '${field}': ${message}`,
    details: { field },
  });
}

/** Validates each item of a list against the allowed values; the error names `field`. */
export function requireValues<T extends string>(field: string, values: string[], allowed: readonly T[]): T[] {
  for (const v of values) {
    if (!(allowed as readonly string[]).includes(v)) {
      throw invalid(field, `unknown value '${v}' (allowed: ${allowed.join(', ')}).`);
    }
  }
  return values as T[];
}

/**
 * Parses the `s` syntax: whitespace-separated `key:value` tokens and free text; a value or a
 * free-text phrase may be double-quoted to hold spaces (`label:"needs info"`, `"exact phrase"`).
 * Unknown keys and unknown status, severity or `is:` values are errors naming `field`, so that a
 * typo is reported instead of silently matching nothing.
 */
export function parseSearch(input: string, field = 's'): ParsedSearch {
  const out: ParsedSearch = {
    status: [],
    severity: [],
    label: [],
    createdBy: [],
    assignedTo: [],
    repository: [],
    path: [],
    unread: false,
    duplicate: false,
    text: [],
  };
  let i = 0;
  const n = input.length;
  const readQuoted = (): string => {
    const end = input.indexOf('"', i + 1);
    if (end < 0) throw invalid(field, 'unterminated quote.');
    const value = input.slice(i + 1, end);
    i = end + 1;
    return value;
  };
  const readBare = (): string => {
    const start = i;
    while (i < n && !/\s/.test(input[i] as string)) i++;
    return input.slice(start, i);
  };
  while (i < n) {
    if (/\s/.test(input[i] as string)) {
      i++;
      continue;
    }
    if (input[i] === '"') {
      const phrase = readQuoted().trim();
      if (phrase) out.text.push(phrase);
      continue;
    }
    const keyMatch = /^([A-Za-z_]+):/.exec(input.slice(i));
    if (!keyMatch) {
      out.text.push(readBare());
      continue;
    }
    const key = (keyMatch[1] as string).toLowerCase();
    if (!(SEARCH_KEYS as readonly string[]).includes(key)) {
      throw invalid(
        field,
        `unknown search key '${key}:' (known: ${SEARCH_KEYS.map((k) => `${k}:`).join(', ')}); quote free text that contains a colon.`,
      );
    }
    i += keyMatch[0].length;
    const raw = input[i] === '"' ? readQuoted() : readBare();
    const values = splitList(raw);
    if (values.length === 0) throw invalid(field, `'${key}:' needs a value.`);
    addValues(out, key as SearchKey, values, field);
  }
  return out;
}

function addValues(out: ParsedSearch, key: SearchKey, values: string[], field: string): void {
  switch (key) {
    case 'status':
      out.status.push(...requireValues(field, values, findingStatuses));
      return;
    case 'severity':
      out.severity.push(...requireValues(field, values, severities));
      return;
    case 'label':
      out.label.push(...values);
      return;
    case 'created_by':
      out.createdBy.push(...values);
      return;
    case 'assigned_to':
      out.assignedTo.push(...values);
      return;
    case 'repository':
      out.repository.push(...values);
      return;
    case 'path':
      out.path.push(...values);
      return;
    case 'is':
      for (const v of requireValues(field, values, ['unread', 'duplicate'] as const)) {
        if (v === 'unread') out.unread = true;
        else out.duplicate = true;
      }
      return;
  }
}
