import { defineSearchAttributeKey } from '@temporalio/common';

/** Typed keys of the custom search attributes (temporal-config/search-attributes.ts registers them). */
export const SearchAttributeKeys = {
  SiteId: defineSearchAttributeKey('SiteId', 'KEYWORD'),
  LogType: defineSearchAttributeKey('LogType', 'KEYWORD'),
  ComponentType: defineSearchAttributeKey('ComponentType', 'KEYWORD'),
  ServiceName: defineSearchAttributeKey('ServiceName', 'KEYWORD'),
};
