import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { approvalRoutes } from './routes';

/** Approvals: policies, the internal submit endpoint, the managers' queue, the decide endpoint, and what is scheduled. */
export const approvalsModule = (deps: AppDeps) => apiModule('approvals', ['/api/workflow/approvals', '/api/workflow/scheduled'], approvalRoutes(deps));
