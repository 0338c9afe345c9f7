import { AttributeBag } from "../attributes/bag";
import { CompiledApiSpec } from "../api_spec";
import { QuotaRule } from "../quota";
import { TcpClientConfig } from "./tcp_client_config";
import { NetworkFailPolicy, TransportConfig } from "./transport_config";

export {
  DEFAULT_CLUSTER,
  DEFAULT_BASE_RETRY_WAIT_NS,
  DEFAULT_MAX_RETRY_WAIT_NS,
  DEFAULT_STATS_UPDATE_INTERVAL_NS,
  DEFAULT_REPORT_BATCH_MAX_ENTRIES,
  DEFAULT_REPORT_BATCH_MAX_TIME_NS,
  DEFAULT_REPORT_BUFFER_MAX_ENTRIES,
  DEFAULT_REPORT_BUFFER_MAX_BYTES,
  DEFAULT_MESH_DOMAIN_SUFFIX,
  NetworkFailPolicy,
  TransportConfig,
} from "./transport_config";

/** Per-service settings, with its bound API specs and quota specs compiled. */
export class ServiceConfig {
  disableCheckCalls: bool = false;
  disableReportCalls: bool = false;
  hubAttributes: AttributeBag = new AttributeBag();
  forwardAttributes: AttributeBag = new AttributeBag();
  apiSpec: CompiledApiSpec = new CompiledApiSpec();
  quotaRules: Array<QuotaRule> = [];
  /**
   * Outgoing forwarded-attributes header value (filter-level forwardAttributes
   * with this service's over them), computed once at configuration; "" = none.
   */
  forwardHeader: string = "";
  /** Service-level policy; overrides the transport's (the spec's rule). */
  networkFailPolicy: NetworkFailPolicy | null = null;
  // The filter's hub attributes with this service's over them (ClientConfig.staticAttributesFor).
  merged: AttributeBag | null = null;
}

/**
 * The compiled plugin configuration: the HttpClientConfig (read-only once
 * built, shared by every request) and, when configured, the TcpClientConfig.
 */
export class ClientConfig {
  transport: TransportConfig = new TransportConfig();
  serviceNames: Array<string> = [];
  services: Map<string, ServiceConfig> = new Map();
  defaultDestinationService: string = "";
  hubAttributes: AttributeBag = new AttributeBag();
  forwardAttributes: AttributeBag = new AttributeBag();
  ignoreForwardedAttributes: bool = false;
  /** Outgoing forwarded-attributes header for requests without a ServiceConfig. */
  forwardHeader: string = "";
  /** TcpClientConfig: present when the plugin serves TCP connections. */
  tcp: TcpClientConfig | null = null;
  private lastServiceName: string = "";
  private lastService: ServiceConfig | null = null;
  // The default's ServiceConfig once found (services are only ever added).
  private defaultService: ServiceConfig | null = null;

  /** The ServiceConfig for a destination service, falling back to the default; null if neither exists. */
  serviceFor(destinationService: string): ServiceConfig | null {
    // Consecutive requests mostly name the same service: a compare of the
    // last name answers without hashing it.
    const last = this.lastServiceName;
    if (destinationService.length > 0 && (changetype<usize>(destinationService) == changetype<usize>(last) || destinationService == last)) return this.lastService;
    if (destinationService.length > 0 && this.services.has(destinationService)) {
      const found = this.services.get(destinationService);
      this.lastServiceName = destinationService;
      this.lastService = found;
      return found;
    }
    const known = this.defaultService;
    if (known !== null) return known;
    const d = this.defaultDestinationService;
    if (d.length == 0 || !this.services.has(d)) return null;
    const found = this.services.get(d);
    this.defaultService = found;
    return found;
  }

  /**
   * Steps 1 and 2 of the order of application: the filter's static hub
   * attributes, with the service's over them; merged once per service and
   * shared by its requests (read-only).
   */
  // @ts-ignore: decorator
  @inline staticAttributesFor(service: ServiceConfig | null): AttributeBag {
    if (service === null) return this.hubAttributes;
    const merged = service.merged;
    return merged !== null ? merged : this.mergeStaticAttributes(service);
  }

  private mergeStaticAttributes(service: ServiceConfig): AttributeBag {
    let merged = service.merged;
    if (merged === null) {
      merged = new AttributeBag();
      merged.merge(this.hubAttributes);
      merged.merge(service.hubAttributes);
      service.merged = merged;
    }
    return merged;
  }

  failPolicyFor(service: ServiceConfig | null): NetworkFailPolicy {
    if (service !== null && service.networkFailPolicy !== null) return service.networkFailPolicy as NetworkFailPolicy;
    return this.transport.networkFailPolicy;
  }
}
