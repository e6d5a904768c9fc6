import { resolveRetention, ResolvedRetention } from '../../data/archival/policies';
import { LogType } from '../../domain/archival';
import { ArchivalDeps } from './deps';

export interface ResolveSiteRetentionInput {
  logType: LogType;
  siteId: string;
}

export function resolveSiteRetention({ db }: ArchivalDeps) {
  return async (input: ResolveSiteRetentionInput): Promise<ResolvedRetention> => resolveRetention(db, input.logType, input.siteId);
}
