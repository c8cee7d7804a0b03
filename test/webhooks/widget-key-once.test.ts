import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Request } from '../../src/http/server.js';
import type { TenantId, TenantRecord } from '../../src/identity/types.js';
import { WebhookService } from '../../src/webhooks/service.js';
import type { Dispatcher } from '../../src/webhooks/dispatcher.js';
import type { WebhookStore } from '../../src/webhooks/store.js';

function counted(status: TenantRecord['status'] = 'active') {
  const reads = { keys: 0, tenants: 0 };
  const store = {
    findWidgetKey: async () => {
      reads.keys++;
      return { id: 'w_1', tenantId: 't_1', name: 'w', createdAt: 0 };
    },
  } as unknown as WebhookStore;
  const service = new WebhookService({
    store,
    dispatcher: {} as Dispatcher,
    getTenant: async (id: TenantId) => {
      reads.tenants++;
      return { id, status } as TenantRecord;
    },
  });
  return { service, reads };
}

test('the credential probe and the event route share one look-up of a widget key per request', async () => {
  const { service, reads } = counted();
  const req = {} as Request;
  assert.ok(await service.probe('bwk_a', req));
  assert.equal((await service.widgetKey('bwk_a', req)).widget.id, 'w_1');
  assert.deepEqual(reads, { keys: 1, tenants: 1 });
  // Another request, or another token on the same request, reads again: nothing outlives its request.
  await service.widgetKey('bwk_a', {} as Request);
  await service.widgetKey('bwk_b', req);
  assert.deepEqual(reads, { keys: 3, tenants: 3 });
});

test('a suspended tenant is still refused when the look-up is shared', async () => {
  const { service } = counted('suspended');
  const req = {} as Request;
  assert.ok(await service.probe('bwk_a', req));
  await assert.rejects(service.widgetKey('bwk_a', req), /suspended/);
});
