// Waits until CustomResourceDefinitions are Established, reading their
// status directly: `kubectl wait --for=condition=Established` right after
// creating a CRD can fail with ".status.conditions accessor error" when it
// reads the CRD before the apiextensions controller has written any status.
import type { ControlPlane } from './controlplane.js';
import { pollUntil } from './wait.js';

interface CustomResourceDefinition {
  status?: { conditions?: { type: string; status: string }[] | null };
}

export async function waitForCrdsEstablished(cp: ControlPlane, names: readonly string[], timeoutMs = 60_000): Promise<void> {
  for (const name of names) {
    await pollUntil(
      `CustomResourceDefinition ${name} Established`,
      async () => {
        const response = await cp.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
        if (response.status !== 200) return undefined;
        const crd = JSON.parse(response.body) as CustomResourceDefinition;
        return crd.status?.conditions?.some((condition) => condition.type === 'Established' && condition.status === 'True') === true ? true : undefined;
      },
      { timeoutMs },
    );
  }
}
