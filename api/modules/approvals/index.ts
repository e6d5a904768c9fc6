import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { approvalRoutes } from './routes';

/** Approvals: policies, the internal submit endpoint, the managers' queue and the decide endpoint. */
export const approvalsModule = (deps: AppDeps) => apiModule('approvals', ['/api/workflow/approvals'], approvalRoutes(deps));
