import { TemplateTexts } from '../../domain/render-template';

/**
 * The emails the platform sends of its own, in English and Arabic: approval notices, and deploy and
 * certificate notices to a service's owners. Rendered like a site's
 * templates (values escaped, `dir="rtl"` for Arabic); the variables are the platform's, never a caller's.
 */
export const PLATFORM_TEMPLATES = {
  'approval-requested': {
    subject_en: 'Approval needed: {{title}}',
    body_en:
      '<p>{{requestedBy}} asks you to approve the {{componentType}} “{{title}}” of site {{siteId}} (stage: {{stageName}}).</p>' +
      '<p>What changes: {{changeSummary}}</p><p><a href="{{link}}">Review the request</a></p>',
    subject_ar: 'مطلوب اعتماد: {{title}}',
    body_ar:
      '<p>يطلب {{requestedBy}} اعتماد {{componentType}} «{{title}}» في الموقع {{siteId}} (المرحلة: {{stageName}}).</p>' +
      '<p>التغييرات: {{changeSummary}}</p><p><a href="{{link}}">مراجعة الطلب</a></p>',
  },
  'approval-reminder': {
    subject_en: 'Reminder: approval needed: {{title}}',
    body_en:
      '<p>The {{componentType}} “{{title}}” of site {{siteId}} still waits for your decision (stage: {{stageName}}), requested by {{requestedBy}}.</p>' +
      '<p>What changes: {{changeSummary}}</p><p><a href="{{link}}">Review the request</a></p>',
    subject_ar: 'تذكير: مطلوب اعتماد: {{title}}',
    body_ar:
      '<p>ما زال {{componentType}} «{{title}}» في الموقع {{siteId}} ينتظر قرارك (المرحلة: {{stageName}})، بطلب من {{requestedBy}}.</p>' +
      '<p>التغييرات: {{changeSummary}}</p><p><a href="{{link}}">مراجعة الطلب</a></p>',
  },
  'approval-escalated': {
    subject_en: 'Approval overdue: {{title}}',
    body_en:
      '<p>The {{componentType}} “{{title}}” of site {{siteId}}, requested by {{requestedBy}}, has had no decision on stage {{stageName}} (role {{role}}) in time.</p>' +
      '<p>What changes: {{changeSummary}}</p><p><a href="{{link}}">Review the request</a></p>',
    subject_ar: 'اعتماد متأخر: {{title}}',
    body_ar:
      '<p>لم يُتخذ قرار في الوقت المحدد بشأن {{componentType}} «{{title}}» في الموقع {{siteId}}، بطلب من {{requestedBy}}، في المرحلة {{stageName}} (الدور {{role}}).</p>' +
      '<p>التغييرات: {{changeSummary}}</p><p><a href="{{link}}">مراجعة الطلب</a></p>',
  },
  'approval-outcome': {
    subject_en: '{{title}}: {{outcomeEn}}',
    body_en:
      '<p>Your request to publish the {{componentType}} “{{title}}” of site {{siteId}} was {{outcomeEn}}.</p><p><a href="{{link}}">See the request</a></p>',
    subject_ar: '{{title}}: {{outcomeAr}}',
    body_ar: '<p>طلبك نشر {{componentType}} «{{title}}» في الموقع {{siteId}}: {{outcomeAr}}.</p><p><a href="{{link}}">عرض الطلب</a></p>',
  },
  'approval-held': {
    subject_en: '{{title}}: waiting for approval',
    body_en:
      '<p>Your publish of the {{componentType}} “{{title}}” of site {{siteId}} reached its time, but the site now asks for approval first.</p>' +
      '<p>It waits for the approvers (stage: {{stageName}}), and is published once they approve.</p><p><a href="{{link}}">See the request</a></p>',
    subject_ar: '{{title}}: بانتظار الاعتماد',
    body_ar:
      '<p>حان موعد نشر {{componentType}} «{{title}}» في الموقع {{siteId}}، لكن الموقع يطلب الآن اعتماده أولاً.</p>' +
      '<p>ينتظر قرار المعتمدين (المرحلة: {{stageName}})، ويُنشر بعد اعتماده.</p><p><a href="{{link}}">عرض الطلب</a></p>',
  },
  'deploy-outcome': {
    subject_en: '{{serviceName}}: deploy {{outcomeEn}}',
    body_en:
      '<p>The deploy of {{image}} to service {{serviceName}} {{outcomeEn}} at {{at}}.</p><p>Why: {{reason}}</p>' +
      '<p>What serves now: {{servingEn}}.</p><p><a href="{{link}}">See the deployment</a></p>',
    subject_ar: '{{serviceName}}: {{outcomeAr}}',
    body_ar:
      '<p>نشر {{image}} على الخدمة {{serviceName}}: {{outcomeAr}} في {{at}}.</p><p>السبب: {{reason}}</p>' +
      '<p>ما يخدم الآن: {{servingAr}}.</p><p><a href="{{link}}">عرض النشر</a></p>',
  },
  'certificate-problem': {
    subject_en: '{{hostname}}: certificate not renewed',
    body_en:
      '<p>The certificate of {{hostname}} (service {{serviceName}}) could not be renewed.</p><p>The ACME server said: {{problem}}</p>' +
      '<p>The current certificate is served until {{notAfter}}; the platform tries again on its own.</p><p><a href="{{link}}">See the service</a></p>',
    subject_ar: '{{hostname}}: لم تُجدَّد الشهادة',
    body_ar:
      '<p>تعذّر تجديد شهادة {{hostname}} (الخدمة {{serviceName}}).</p><p>قال خادم ACME: {{problem}}</p>' +
      '<p>تبقى الشهادة الحالية مستخدمة حتى {{notAfter}}، وستعيد المنصة المحاولة تلقائياً.</p><p><a href="{{link}}">عرض الخدمة</a></p>',
  },
  'certificate-ending': {
    subject_en: '{{hostname}}: the uploaded certificate ends soon',
    body_en:
      '<p>The certificate uploaded for {{hostname}} (service {{serviceName}}) is served until {{notAfter}}.</p>' +
      '<p>Upload another before then. Where the platform has an ACME server, removing the upload lets it issue one.</p><p><a href="{{link}}">See the service</a></p>',
    subject_ar: '{{hostname}}: الشهادة المرفوعة تنتهي قريباً',
    body_ar:
      '<p>الشهادة المرفوعة لـ {{hostname}} (الخدمة {{serviceName}}) مستخدمة حتى {{notAfter}}.</p>' +
      '<p>ارفع شهادة أخرى قبل ذلك. إن كان للمنصة خادم ACME فحذف الشهادة المرفوعة يتيح له إصدار شهادة.</p><p><a href="{{link}}">عرض الخدمة</a></p>',
  },
} satisfies Record<string, TemplateTexts>;

export type PlatformTemplateName = keyof typeof PLATFORM_TEMPLATES;

export const isPlatformTemplate = (name: unknown): name is PlatformTemplateName =>
  typeof name === 'string' && Object.prototype.hasOwnProperty.call(PLATFORM_TEMPLATES, name);
