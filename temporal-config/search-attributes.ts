import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SearchAttributeKeys } from '../domain/search-attributes';

/**
 * Custom search attributes every workflow sets where they apply, so operators can filter runs in the Web UI:
 * the keys the domain declares (all Keyword), by name.
 */
export const SEARCH_ATTRIBUTES: Record<string, 'Keyword'> = Object.fromEntries(Object.values(SearchAttributeKeys).map((key) => [key.name, 'Keyword']));

/** The `--search-attribute` flags that register them when the dev server starts. */
export function searchAttributeFlags(): string[] {
  return Object.entries(SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]);
}

/** Registers the missing ones on a running server (production or an already running dev server); idempotent. */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.keys(SEARCH_ATTRIBUTES).filter((name) => !(name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  const searchAttributes: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
  for (const name of missing) {
    searchAttributes[name] = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  }
  await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
}
