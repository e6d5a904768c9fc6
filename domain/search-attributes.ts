import { defineSearchAttributeKey } from '@temporalio/common';

/** The custom search attributes, declared once: typed keys for workflows; temporal-config registers them by these names. */
export const SearchAttributeKeys = {
  SiteId: defineSearchAttributeKey('SiteId', 'KEYWORD'),
  LogType: defineSearchAttributeKey('LogType', 'KEYWORD'),
  ComponentType: defineSearchAttributeKey('ComponentType', 'KEYWORD'),
  ServiceName: defineSearchAttributeKey('ServiceName', 'KEYWORD'),
};
