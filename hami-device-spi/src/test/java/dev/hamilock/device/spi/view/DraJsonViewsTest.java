package dev.hamilock.device.spi.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The ResourceSlice and ResourceClaim readers and the Pod's DRA status (issue 28): the fields
 * {@code k8s.io/api} {@code resource/v1/types.go} defines, and a typed error naming every malformed
 * value. Realistic whole objects are read in hami-device-nvidia's {@code DraUsageTest} from its
 * {@code dra} fixtures.
 */
class DraJsonViewsTest {

  private static ResourceSliceView slice(String json) throws MalformedObjectException {
    return JsonViews.resourceSliceView(
        JsonViews.readObject(json.replace('\'', '"').getBytes(StandardCharsets.UTF_8)));
  }

  private static ResourceClaimView claim(String json) throws MalformedObjectException {
    return JsonViews.resourceClaimView(
        JsonViews.readObject(json.replace('\'', '"').getBytes(StandardCharsets.UTF_8)));
  }

  private static final String SLICE =
      "{'metadata':{'name':'s'},'spec':{'driver':'d.example.com','nodeName':'n1',"
          + "'pool':{'name':'n1','generation':4},'devices':[%s]}}";

  private static final String CLAIM =
      "{'metadata':{'name':'c','namespace':'ns','uid':'u1'},'status':{'allocation':{%s}}}";

  private static PodView pod(String status) throws MalformedObjectException {
    return JsonViews.podView(
        JsonViews.readObject(
            ("{'metadata':{'name':'p','namespace':'ns'},'spec':{},'status':" + status + "}")
                .replace('\'', '"')
                .getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void podReadsTheResourcesKubeSchedulerGaveThroughDra() throws Exception {
    assertThat(
            pod("{'extendedResourceClaimStatus':{'resourceClaimName':'p-extended-resources-x',"
                    + "'requestMappings':[{'containerName':'c','resourceName':'nvidia.com/gpu',"
                    + "'requestName':'container-0-request-0'},{'containerName':'d',"
                    + "'resourceName':'nvidia.com/gpu','requestName':'container-1-request-0'}]}}")
                .draResources())
        .containsExactly("nvidia.com/gpu");
    assertThat(pod("{'phase':'Running'}").draResources()).isEmpty();
    assertThatThrownBy(
            () -> pod("{'extendedResourceClaimStatus':{'requestMappings':[{'resourceName':7}]}}"))
        .isInstanceOfSatisfying(
            MalformedObjectException.class,
            e ->
                assertThat(e.field())
                    .isEqualTo(
                        "Pod.status.extendedResourceClaimStatus.requestMappings[0].resourceName"));
  }

  /**
   * The claims a pod uses (core/v1 {@code PodResourceClaim}, {@code PodResourceClaimStatus}, {@code
   * PodExtendedResourceClaimStatus}): named directly, generated from a template, created by
   * kube-scheduler for extended resources; a template entry whose claim is not generated yet names
   * none.
   */
  @Test
  void podReadsTheNamesOfTheClaimsItUses() throws Exception {
    PodView v =
        JsonViews.podView(
            JsonViews.readObject(
                ("{'metadata':{'name':'p','namespace':'ns'},'spec':{'resourceClaims':["
                        + "{'name':'direct','resourceClaimName':'shared-claim'},"
                        + "{'name':'tpl','resourceClaimTemplateName':'t'},"
                        + "{'name':'tpl2','resourceClaimTemplateName':'t'}]},"
                        + "'status':{'resourceClaimStatuses':["
                        + "{'name':'tpl','resourceClaimName':'p-tpl-abcde'},{'name':'tpl2'}],"
                        + "'extendedResourceClaimStatus':{'resourceClaimName':"
                        + "'p-extended-resources-x','requestMappings':[]}}}")
                    .replace('\'', '"')
                    .getBytes(StandardCharsets.UTF_8)));
    assertThat(v.resourceClaimNames())
        .containsExactlyInAnyOrder("shared-claim", "p-tpl-abcde", "p-extended-resources-x");
    assertThat(pod("{'phase':'Running'}").resourceClaimNames()).as("absent").isEmpty();
    assertThat(
            pod("{'resourceClaimStatuses':null,'extendedResourceClaimStatus':"
                    + "{'resourceClaimName':''}}")
                .resourceClaimNames())
        .as("null and empty")
        .isEmpty();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{'resourceClaims':{}},'status':{}|Pod.spec.resourceClaims",
        "{'resourceClaims':['c']},'status':{}|Pod.spec.resourceClaims[0]",
        "{'resourceClaims':[{'name':'a','resourceClaimName':7}]},'status':{}"
            + "|Pod.spec.resourceClaims[0].resourceClaimName",
        "{},'status':{'resourceClaimStatuses':[{'name':'a','resourceClaimName':['c']}]}"
            + "|Pod.status.resourceClaimStatuses[0].resourceClaimName",
        "{},'status':{'extendedResourceClaimStatus':{'resourceClaimName':{}}}"
            + "|Pod.status.extendedResourceClaimStatus.resourceClaimName",
      })
  void malformedClaimNamesAreRejectedNamingTheField(String specAndStatus, String field) {
    assertThatThrownBy(
            () ->
                JsonViews.podView(
                    JsonViews.readObject(
                        ("{'metadata':{'name':'p','namespace':'ns'},'spec':" + specAndStatus + "}")
                            .replace('\'', '"')
                            .getBytes(StandardCharsets.UTF_8))))
        .isInstanceOfSatisfying(
            MalformedObjectException.class, e -> assertThat(e.field()).isEqualTo(field));
  }

  /** {@code status.reservedFor[].uid} ({@code ResourceClaimConsumerReference}). */
  @Test
  void claimReadsTheUidsItIsReservedFor() throws Exception {
    ResourceClaimView c =
        claim(
            "{'metadata':{'name':'c','namespace':'ns'},'status':{'allocation':{},'reservedFor':["
                + "{'resource':'pods','name':'p','uid':'u-p'},"
                + "{'resource':'pods','name':'q','uid':'u-q'}]}}");
    assertThat(c.reservedFor()).containsExactlyInAnyOrder("u-p", "u-q");
    assertThat(claim(String.format(CLAIM, "")).reservedFor()).as("absent").isEmpty();
    assertThat(
            claim("{'metadata':{'name':'c','namespace':'ns'},'status':{'reservedFor':null}}")
                .reservedFor())
        .as("null")
        .isEmpty();
  }

  @Test
  void sliceReadsDriverPoolNodeAndDevices() throws Exception {
    ResourceSliceView s =
        slice(
            String.format(
                SLICE,
                "{'name':'g0','attributes':{'uuid':{'string':'GPU-1'},'minor':{'int':0},"
                    + "'d.example.com/ok':{'bool':true},'v':{'version':'1.2.3'}},"
                    + "'capacity':{'memory':{'value':'16Gi','requestPolicy':{'default':'1Gi'}}}},"
                    + "{'name':'g1'}"));
    assertThat(s.driver()).isEqualTo("d.example.com");
    assertThat(s.pool()).isEqualTo("n1");
    assertThat(s.generation()).isEqualTo(4);
    assertThat(s.nodeName()).isEqualTo("n1");
    assertThat(s.devices()).hasSize(2);
    assertThat(s.devices().get(0).attributes())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("uuid", "GPU-1", "minor", "0", "d.example.com/ok", "true", "v", "1.2.3"));
    assertThat(s.devices().get(0).capacity())
        .containsExactly(Map.entry("memory", new BigDecimal(16L << 30)));
    assertThat(s.devices().get(1).attributes()).isEmpty();
  }

  @Test
  void claimReadsResultsAndTheNodeOfItsAllocation() throws Exception {
    ResourceClaimView c =
        claim(
            String.format(
                CLAIM,
                "'devices':{'results':[{'request':'r','driver':'d','pool':'p','device':'g0',"
                    + "'shareID':'s1','consumedCapacity':{'memory':'4Gi','cores':'30'}},"
                    + "{'request':'r','driver':'d','pool':'p','device':'g1','shareID':'',"
                    + "'adminAccess':true}]},'nodeSelector':{'nodeSelectorTerms':[{'matchFields':"
                    + "[{'key':'metadata.name','operator':'In','values':['n1']}]}]}"));
    assertThat(c.key()).isEqualTo("ns/c");
    assertThat(c.uid()).isEqualTo("u1");
    assertThat(c.allocated()).isTrue();
    assertThat(c.allocationNode()).isEqualTo("n1");
    assertThat(c.results().get(0))
        .isEqualTo(
            new ResourceClaimView.Result(
                "d",
                "p",
                "g0",
                Optional.of("s1"),
                Map.of("memory", new BigDecimal(4L << 30), "cores", new BigDecimal(30)),
                false));
    assertThat(c.results().get(1).shareId()).as("\"\" reads as absent").isEmpty();
    assertThat(c.results().get(1).adminAccess()).isTrue();
  }

  @Test
  void unallocatedClaimAndSelectorsNotNamingOneNode() throws Exception {
    ResourceClaimView pending = claim("{'metadata':{'name':'c','namespace':'ns'},'status':{}}");
    assertThat(pending.allocated()).isFalse();
    assertThat(pending.results()).isEmpty();
    for (String sel :
        new String[] {
          "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'zone','operator':'In','values':['a']}]}]}",
          "{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':'In','values':['a','b']}]}]}",
          "{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['a']}]}]}"
        }) {
      assertThat(claim(String.format(CLAIM, "'nodeSelector':" + sel)).allocationNode())
          .as(sel)
          .isEmpty();
    }
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{'metadata':{'name':'s'},'spec':{'pool':{'name':'p'}}}"
            + "|ResourceSlice[s].spec.driver|missing",
        "{'metadata':{'name':'s'},'spec':{'driver':'d'}}|ResourceSlice[s].spec.pool.name|missing",
        "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':'1'}}}"
            + "|ResourceSlice[s].spec.pool.generation|\"1\"",
        "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p'},'devices':{}}}"
            + "|ResourceSlice[s].spec.devices|{}",
        "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p'},'devices':[{}]}}"
            + "|ResourceSlice[s].spec.devices[0].name|missing",
        "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p'},'devices':[{'name':'g',"
            + "'attributes':{'uuid':{'string':'a','int':1}}}]}}"
            + "|ResourceSlice[s].spec.devices[0].attributes[\"uuid\"]|exactly one",
        "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p'},'devices':[{'name':'g',"
            + "'attributes':{'uuid':{}}}]}}"
            + "|ResourceSlice[s].spec.devices[0].attributes[\"uuid\"]|exactly one",
        "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p'},'devices':[{'name':'g',"
            + "'capacity':{'memory':{'value':'-1Gi'}}}]}}"
            + "|ResourceSlice[s].spec.devices[0].capacity[\"memory\"].value|-1Gi",
        "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p'},'devices':[{'name':'g',"
            + "'capacity':{'memory':{}}}]}}"
            + "|ResourceSlice[s].spec.devices[0].capacity[\"memory\"].value|missing",
        "{'metadata':{'name':'c'}}|ResourceClaim.metadata.namespace|claim c",
        "{'metadata':{'name':'c','namespace':'ns'},'status':{'allocation':{'devices':{'results':"
            + "[{'driver':'d','pool':'p'}]}}}}"
            + "|ResourceClaim[ns/c].status.allocation.devices.results[0].device|missing",
        "{'metadata':{'name':'c','namespace':'ns'},'status':{'allocation':{'devices':{'results':"
            + "[{'driver':'d','pool':'p','device':'g','consumedCapacity':{'memory':'4Gx'}}]}}}}"
            + "|ResourceClaim[ns/c].status.allocation.devices.results[0].consumedCapacity[\"memory\"]"
            + "|4Gx",
        "{'metadata':{'name':'c','namespace':'ns'},'status':{'allocation':{'devices':{'results':"
            + "[{'driver':'d','pool':'p','device':'g','adminAccess':'yes'}]}}}}"
            + "|ResourceClaim[ns/c].status.allocation.devices.results[0].adminAccess|yes",
        "{'metadata':{'name':'c','namespace':'ns'},'status':{'reservedFor':{}}}"
            + "|ResourceClaim[ns/c].status.reservedFor|{}",
        "{'metadata':{'name':'c','namespace':'ns'},'status':{'reservedFor':[{'uid':1}]}}"
            + "|ResourceClaim[ns/c].status.reservedFor[0].uid|1",
        "{'metadata':{'name':'c','namespace':'ns'},'status':{'reservedFor':['u']}}"
            + "|ResourceClaim[ns/c].status.reservedFor[0]|u",
        "{'metadata':{'name':'c','namespace':'ns'},'status':{'allocation':{'nodeSelector':"
            + "{'nodeSelectorTerms':{}}}}}"
            + "|ResourceClaim[ns/c].status.allocation.nodeSelector.nodeSelectorTerms|{}",
      })
  void malformedFieldsAreRejectedNamingFieldAndValue(String json, String field, String shown) {
    boolean isSlice = json.contains("'spec'") && !json.contains("'namespace'");
    assertThatThrownBy(
            () -> {
              if (isSlice) {
                slice(json);
              } else {
                claim(json);
              }
            })
        .isInstanceOfSatisfying(
            MalformedObjectException.class, e -> assertThat(e.field()).isEqualTo(field))
        .hasMessageContaining(shown);
  }
}
