# ruff: noqa: E501 - one declaration per line, as the oracle prints it
"""The functions of the API server's CEL environment for CRD rules, as declarations.

One line per overload: ``name overload-id member(0/1) arg;arg;... -> result``, types in
cel-go's ``types.Type.String()`` spelling (``<A>`` is a type parameter). This is the
environment k8s.io/apiserver v0.37.2 ``pkg/cel/environment/base.go`` builds for stored
expressions (``StoredExpressions``: the standard library, ``library.URLs``, ``Regex``,
``Lists``, ``Authz``, ``AuthzSelectors``, ``Quantity``, ``IP``, ``CIDR``, ``Format``,
``SemverLib``, cel-go's ``ext.Strings(2)``, ``ext.Sets``, ``ext.Lists(3)``,
``ext.TwoVarComprehensions``, optional types), listed by the conformance oracle
(``conformance/celcost``, ``{"op": "decls"}``);
``conformance/test_celcost_conformance.py`` checks that this table still equals it.
"""

from __future__ import annotations

__all__ = ["DECLARATIONS", "MACROS"]

DECLARATIONS = """\
!_ logical_not 0 bool -> bool
-_ negate_double 0 double -> double
-_ negate_int64 0 int -> int
@in in_list 0 <A>;list(<A>) -> bool
@in in_map 0 <A>;map(<A>, <B>) -> bool
@not_strictly_false not_strictly_false 0 bool -> bool
@sortByAssociatedKeys list_bool_sortByAssociatedKeys 1 list(<T>);list(bool) -> list(<T>)
@sortByAssociatedKeys list_bytes_sortByAssociatedKeys 1 list(<T>);list(bytes) -> list(<T>)
@sortByAssociatedKeys list_double_sortByAssociatedKeys 1 list(<T>);list(double) -> list(<T>)
@sortByAssociatedKeys list_google.protobuf.Duration_sortByAssociatedKeys 1 list(<T>);list(google.protobuf.Duration) -> list(<T>)
@sortByAssociatedKeys list_google.protobuf.Timestamp_sortByAssociatedKeys 1 list(<T>);list(google.protobuf.Timestamp) -> list(<T>)
@sortByAssociatedKeys list_int_sortByAssociatedKeys 1 list(<T>);list(int) -> list(<T>)
@sortByAssociatedKeys list_string_sortByAssociatedKeys 1 list(<T>);list(string) -> list(<T>)
@sortByAssociatedKeys list_uint_sortByAssociatedKeys 1 list(<T>);list(uint) -> list(<T>)
_!=_ not_equals 0 <A>;<A> -> bool
_%_ modulo_int64 0 int;int -> int
_%_ modulo_uint64 0 uint;uint -> uint
_&&_ logical_and 0 bool;bool -> bool
_*_ multiply_double 0 double;double -> double
_*_ multiply_int64 0 int;int -> int
_*_ multiply_uint64 0 uint;uint -> uint
_+_ add_bytes 0 bytes;bytes -> bytes
_+_ add_double 0 double;double -> double
_+_ add_duration_duration 0 google.protobuf.Duration;google.protobuf.Duration -> google.protobuf.Duration
_+_ add_duration_timestamp 0 google.protobuf.Duration;google.protobuf.Timestamp -> google.protobuf.Timestamp
_+_ add_int64 0 int;int -> int
_+_ add_list 0 list(<A>);list(<A>) -> list(<A>)
_+_ add_string 0 string;string -> string
_+_ add_timestamp_duration 0 google.protobuf.Timestamp;google.protobuf.Duration -> google.protobuf.Timestamp
_+_ add_uint64 0 uint;uint -> uint
_-_ subtract_double 0 double;double -> double
_-_ subtract_duration_duration 0 google.protobuf.Duration;google.protobuf.Duration -> google.protobuf.Duration
_-_ subtract_int64 0 int;int -> int
_-_ subtract_timestamp_duration 0 google.protobuf.Timestamp;google.protobuf.Duration -> google.protobuf.Timestamp
_-_ subtract_timestamp_timestamp 0 google.protobuf.Timestamp;google.protobuf.Timestamp -> google.protobuf.Duration
_-_ subtract_uint64 0 uint;uint -> uint
_/_ divide_double 0 double;double -> double
_/_ divide_int64 0 int;int -> int
_/_ divide_uint64 0 uint;uint -> uint
_<=_ less_equals_bool 0 bool;bool -> bool
_<=_ less_equals_bytes 0 bytes;bytes -> bool
_<=_ less_equals_double 0 double;double -> bool
_<=_ less_equals_double_int64 0 double;int -> bool
_<=_ less_equals_double_uint64 0 double;uint -> bool
_<=_ less_equals_duration 0 google.protobuf.Duration;google.protobuf.Duration -> bool
_<=_ less_equals_int64 0 int;int -> bool
_<=_ less_equals_int64_double 0 int;double -> bool
_<=_ less_equals_int64_uint64 0 int;uint -> bool
_<=_ less_equals_string 0 string;string -> bool
_<=_ less_equals_timestamp 0 google.protobuf.Timestamp;google.protobuf.Timestamp -> bool
_<=_ less_equals_uint64 0 uint;uint -> bool
_<=_ less_equals_uint64_double 0 uint;double -> bool
_<=_ less_equals_uint64_int64 0 uint;int -> bool
_<_ less_bool 0 bool;bool -> bool
_<_ less_bytes 0 bytes;bytes -> bool
_<_ less_double 0 double;double -> bool
_<_ less_double_int64 0 double;int -> bool
_<_ less_double_uint64 0 double;uint -> bool
_<_ less_duration 0 google.protobuf.Duration;google.protobuf.Duration -> bool
_<_ less_int64 0 int;int -> bool
_<_ less_int64_double 0 int;double -> bool
_<_ less_int64_uint64 0 int;uint -> bool
_<_ less_string 0 string;string -> bool
_<_ less_timestamp 0 google.protobuf.Timestamp;google.protobuf.Timestamp -> bool
_<_ less_uint64 0 uint;uint -> bool
_<_ less_uint64_double 0 uint;double -> bool
_<_ less_uint64_int64 0 uint;int -> bool
_==_ equals 0 <A>;<A> -> bool
_>=_ greater_equals_bool 0 bool;bool -> bool
_>=_ greater_equals_bytes 0 bytes;bytes -> bool
_>=_ greater_equals_double 0 double;double -> bool
_>=_ greater_equals_double_int64 0 double;int -> bool
_>=_ greater_equals_double_uint64 0 double;uint -> bool
_>=_ greater_equals_duration 0 google.protobuf.Duration;google.protobuf.Duration -> bool
_>=_ greater_equals_int64 0 int;int -> bool
_>=_ greater_equals_int64_double 0 int;double -> bool
_>=_ greater_equals_int64_uint64 0 int;uint -> bool
_>=_ greater_equals_string 0 string;string -> bool
_>=_ greater_equals_timestamp 0 google.protobuf.Timestamp;google.protobuf.Timestamp -> bool
_>=_ greater_equals_uint64 0 uint;uint -> bool
_>=_ greater_equals_uint64_double 0 uint;double -> bool
_>=_ greater_equals_uint64_int64 0 uint;int -> bool
_>_ greater_bool 0 bool;bool -> bool
_>_ greater_bytes 0 bytes;bytes -> bool
_>_ greater_double 0 double;double -> bool
_>_ greater_double_int64 0 double;int -> bool
_>_ greater_double_uint64 0 double;uint -> bool
_>_ greater_duration 0 google.protobuf.Duration;google.protobuf.Duration -> bool
_>_ greater_int64 0 int;int -> bool
_>_ greater_int64_double 0 int;double -> bool
_>_ greater_int64_uint64 0 int;uint -> bool
_>_ greater_string 0 string;string -> bool
_>_ greater_timestamp 0 google.protobuf.Timestamp;google.protobuf.Timestamp -> bool
_>_ greater_uint64 0 uint;uint -> bool
_>_ greater_uint64_double 0 uint;double -> bool
_>_ greater_uint64_int64 0 uint;int -> bool
_?._ select_optional_field 0 dyn;string -> optional_type(<V>)
_?_:_ conditional 0 bool;<A>;<A> -> <A>
_[?_] list_optindex_optional_int 0 list(<V>);int -> optional_type(<V>)
_[?_] map_optindex_optional_value 0 map(<K>, <V>);<K> -> optional_type(<V>)
_[?_] optional_list_optindex_optional_int 0 optional_type(list(<V>));int -> optional_type(<V>)
_[?_] optional_map_optindex_optional_value 0 optional_type(map(<K>, <V>));<K> -> optional_type(<V>)
_[_] index_list 0 list(<A>);int -> <A>
_[_] index_map 0 map(<A>, <B>);<A> -> <B>
_[_] optional_list_index_int 0 optional_type(list(<V>));int -> optional_type(<V>)
_[_] optional_map_index_value 0 optional_type(map(<K>, <V>));<K> -> optional_type(<V>)
__not_strictly_false__ __not_strictly_false__ 0 bool -> bool
_in_ in_list 0 <A>;list(<A>) -> bool
_in_ in_map 0 <A>;map(<A>, <B>) -> bool
_||_ logical_or 0 bool;bool -> bool
add quantity_add 1 kubernetes.Quantity;kubernetes.Quantity -> kubernetes.Quantity
add quantity_add_int 1 kubernetes.Quantity;int -> kubernetes.Quantity
allowed decision_allowed 1 kubernetes.authorization.Decision -> bool
asApproximateFloat quantity_get_float 1 kubernetes.Quantity -> double
asInteger quantity_get_int 1 kubernetes.Quantity -> int
bool bool_to_bool 0 bool -> bool
bool string_to_bool 0 string -> bool
bytes bytes_to_bytes 0 bytes -> bytes
bytes string_to_bytes 0 string -> bytes
cel.@mapInsert @mapInsert_map_key_value 0 map(<K>, <V>);<K>;<V> -> map(<K>, <V>)
cel.@mapInsert @mapInsert_map_map 0 map(<K>, <V>);map(<K>, <V>) -> map(<K>, <V>)
charAt string_char_at_int 1 string;int -> string
check pathcheck_check 1 kubernetes.authorization.PathCheck;string -> kubernetes.authorization.Decision
check resourcecheck_check 1 kubernetes.authorization.ResourceCheck;string -> kubernetes.authorization.Decision
cidr string_to_cidr 0 string -> net.CIDR
compareTo quantity_compare_to 1 kubernetes.Quantity;kubernetes.Quantity -> int
compareTo semver_compare_to 1 kubernetes.Semver;kubernetes.Semver -> int
contains contains_string 1 string;string -> bool
containsCIDR cidr_contains_cidr 1 net.CIDR;net.CIDR -> bool
containsCIDR cidr_contains_cidr_string 1 net.CIDR;string -> bool
containsIP cidr_contains_ip_ip 1 net.CIDR;net.IP -> bool
containsIP cidr_contains_ip_string 1 net.CIDR;string -> bool
distinct list_distinct 1 list(<T>) -> list(<T>)
double double_to_double 0 double -> double
double int64_to_double 0 int -> double
double string_to_double 0 string -> double
double uint64_to_double 0 uint -> double
duration duration_to_duration 0 google.protobuf.Duration -> google.protobuf.Duration
duration string_to_duration 0 string -> google.protobuf.Duration
dyn to_dyn 0 <A> -> dyn
endsWith ends_with_string 1 string;string -> bool
error decision_error 1 kubernetes.authorization.Decision -> string
errored decision_errored 1 kubernetes.authorization.Decision -> bool
family ip_family 1 net.IP -> int
fieldSelector authorizer_fieldselector 1 kubernetes.authorization.ResourceCheck;string -> kubernetes.authorization.ResourceCheck
find string_find_string 1 string;string -> string
findAll string_find_all_string 1 string;string -> list(string)
findAll string_find_all_string_int 1 string;string;int -> list(string)
first list_first 1 list(<V>) -> optional_type(<V>)
flatten list_flatten 1 list(list(<T>)) -> list(<T>)
flatten list_flatten_int 1 list(dyn);int -> list(dyn)
format string_format 1 string;list(dyn) -> string
format.byte format.byte 0  -> kubernetes.NamedFormat
format.date format.date 0  -> kubernetes.NamedFormat
format.datetime format.datetime 0  -> kubernetes.NamedFormat
format.dns1035Label format.dns1035Label 0  -> kubernetes.NamedFormat
format.dns1035LabelPrefix format.dns1035LabelPrefix 0  -> kubernetes.NamedFormat
format.dns1123Label format.dns1123Label 0  -> kubernetes.NamedFormat
format.dns1123LabelPrefix format.dns1123LabelPrefix 0  -> kubernetes.NamedFormat
format.dns1123Subdomain format.dns1123Subdomain 0  -> kubernetes.NamedFormat
format.dns1123SubdomainPrefix format.dns1123SubdomainPrefix 0  -> kubernetes.NamedFormat
format.labelValue format.labelValue 0  -> kubernetes.NamedFormat
format.named format-named 0 string -> optional_type(kubernetes.NamedFormat)
format.qualifiedName format.qualifiedName 0  -> kubernetes.NamedFormat
format.uri format.uri 0  -> kubernetes.NamedFormat
format.uuid format.uuid 0  -> kubernetes.NamedFormat
getDate timestamp_to_day_of_month_1_based 1 google.protobuf.Timestamp -> int
getDate timestamp_to_day_of_month_1_based_with_tz 1 google.protobuf.Timestamp;string -> int
getDayOfMonth timestamp_to_day_of_month 1 google.protobuf.Timestamp -> int
getDayOfMonth timestamp_to_day_of_month_with_tz 1 google.protobuf.Timestamp;string -> int
getDayOfWeek timestamp_to_day_of_week 1 google.protobuf.Timestamp -> int
getDayOfWeek timestamp_to_day_of_week_with_tz 1 google.protobuf.Timestamp;string -> int
getDayOfYear timestamp_to_day_of_year 1 google.protobuf.Timestamp -> int
getDayOfYear timestamp_to_day_of_year_with_tz 1 google.protobuf.Timestamp;string -> int
getEscapedPath url_get_escaped_path 1 kubernetes.URL -> string
getFullYear timestamp_to_year 1 google.protobuf.Timestamp -> int
getFullYear timestamp_to_year_with_tz 1 google.protobuf.Timestamp;string -> int
getHost url_get_host 1 kubernetes.URL -> string
getHostname url_get_hostname 1 kubernetes.URL -> string
getHours duration_to_hours 1 google.protobuf.Duration -> int
getHours timestamp_to_hours 1 google.protobuf.Timestamp -> int
getHours timestamp_to_hours_with_tz 1 google.protobuf.Timestamp;string -> int
getMilliseconds duration_to_milliseconds 1 google.protobuf.Duration -> int
getMilliseconds timestamp_to_milliseconds 1 google.protobuf.Timestamp -> int
getMilliseconds timestamp_to_milliseconds_with_tz 1 google.protobuf.Timestamp;string -> int
getMinutes duration_to_minutes 1 google.protobuf.Duration -> int
getMinutes timestamp_to_minutes 1 google.protobuf.Timestamp -> int
getMinutes timestamp_to_minutes_with_tz 1 google.protobuf.Timestamp;string -> int
getMonth timestamp_to_month 1 google.protobuf.Timestamp -> int
getMonth timestamp_to_month_with_tz 1 google.protobuf.Timestamp;string -> int
getPort url_get_port 1 kubernetes.URL -> string
getQuery url_get_query 1 kubernetes.URL -> map(string, list(string))
getScheme url_get_scheme 1 kubernetes.URL -> string
getSeconds duration_to_seconds 1 google.protobuf.Duration -> int
getSeconds timestamp_to_seconds 1 google.protobuf.Timestamp -> int
getSeconds timestamp_to_seconds_tz 1 google.protobuf.Timestamp;string -> int
group authorizer_group 1 kubernetes.authorization.Authorizer;string -> kubernetes.authorization.GroupCheck
hasValue optional_hasValue 1 optional_type(<V>) -> bool
in in_list 0 <A>;list(<A>) -> bool
in in_map 0 <A>;map(<A>, <B>) -> bool
includes list_includes_dyn_dyn 1 dyn;dyn -> bool
indexOf list_a_index_of_int 1 list(<A>);<A> -> int
indexOf string_index_of_string 1 string;string -> int
indexOf string_index_of_string_int 1 string;string;int -> int
int double_to_int64 0 double -> int
int duration_to_int64 0 google.protobuf.Duration -> int
int int64_to_int64 0 int -> int
int string_to_int64 0 string -> int
int timestamp_to_int64 0 google.protobuf.Timestamp -> int
int uint64_to_int64 0 uint -> int
ip cidr_ip 1 net.CIDR -> net.IP
ip string_to_ip 0 string -> net.IP
ip.isCanonical ip_is_canonical 0 string -> bool
isCIDR is_cidr 0 string -> bool
isGlobalUnicast ip_is_global_unicast 1 net.IP -> bool
isGreaterThan quantity_is_greater_than 1 kubernetes.Quantity;kubernetes.Quantity -> bool
isGreaterThan semver_is_greater_than 1 kubernetes.Semver;kubernetes.Semver -> bool
isIP is_ip 0 string -> bool
isInteger quantity_is_integer 1 kubernetes.Quantity -> bool
isLessThan quantity_is_less_than 1 kubernetes.Quantity;kubernetes.Quantity -> bool
isLessThan semver_is_less_than 1 kubernetes.Semver;kubernetes.Semver -> bool
isLinkLocalMulticast ip_is_link_local_multicast 1 net.IP -> bool
isLinkLocalUnicast ip_is_link_local_unicast 1 net.IP -> bool
isLoopback ip_is_loopback 1 net.IP -> bool
isQuantity is_quantity_string 0 string -> bool
isSemver is_semver_string 0 string -> bool
isSemver is_semver_string_bool 0 string;bool -> bool
isSorted list_bool_is_sorted_bool 1 list(bool) -> bool
isSorted list_bytes_is_sorted_bool 1 list(bytes) -> bool
isSorted list_double_is_sorted_bool 1 list(double) -> bool
isSorted list_duration_is_sorted_bool 1 list(google.protobuf.Duration) -> bool
isSorted list_int_is_sorted_bool 1 list(int) -> bool
isSorted list_string_is_sorted_bool 1 list(string) -> bool
isSorted list_timestamp_is_sorted_bool 1 list(google.protobuf.Timestamp) -> bool
isSorted list_uint_is_sorted_bool 1 list(uint) -> bool
isURL is_url_string 0 string -> bool
isUnspecified ip_is_unspecified 1 net.IP -> bool
join list_join 1 list(string) -> string
join list_join_string 1 list(string);string -> string
labelSelector authorizer_labelselector 1 kubernetes.authorization.ResourceCheck;string -> kubernetes.authorization.ResourceCheck
last list_last 1 list(<V>) -> optional_type(<V>)
lastIndexOf list_a_last_index_of_int 1 list(<A>);<A> -> int
lastIndexOf string_last_index_of_string 1 string;string -> int
lastIndexOf string_last_index_of_string_int 1 string;string;int -> int
lists.range lists_range 0 int -> list(int)
lowerAscii string_lower_ascii 1 string -> string
major semver_major 1 kubernetes.Semver -> int
masked cidr_masked 1 net.CIDR -> net.CIDR
matches matches 0 string;string -> bool
matches matches_string 1 string;string -> bool
max list_bool_max_bool 1 list(bool) -> bool
max list_bytes_max_bytes 1 list(bytes) -> bytes
max list_double_max_double 1 list(double) -> double
max list_duration_max_duration 1 list(google.protobuf.Duration) -> google.protobuf.Duration
max list_int_max_int 1 list(int) -> int
max list_string_max_string 1 list(string) -> string
max list_timestamp_max_timestamp 1 list(google.protobuf.Timestamp) -> google.protobuf.Timestamp
max list_uint_max_uint 1 list(uint) -> uint
min list_bool_min_bool 1 list(bool) -> bool
min list_bytes_min_bytes 1 list(bytes) -> bytes
min list_double_min_double 1 list(double) -> double
min list_duration_min_duration 1 list(google.protobuf.Duration) -> google.protobuf.Duration
min list_int_min_int 1 list(int) -> int
min list_string_min_string 1 list(string) -> string
min list_timestamp_min_timestamp 1 list(google.protobuf.Timestamp) -> google.protobuf.Timestamp
min list_uint_min_uint 1 list(uint) -> uint
minor semver_minor 1 kubernetes.Semver -> int
name resourcecheck_name 1 kubernetes.authorization.ResourceCheck;string -> kubernetes.authorization.ResourceCheck
namespace resourcecheck_namespace 1 kubernetes.authorization.ResourceCheck;string -> kubernetes.authorization.ResourceCheck
optional.none optional_none 0  -> optional_type(<V>)
optional.of optional_of 0 <V> -> optional_type(<V>)
optional.ofNonZeroValue optional_ofNonZeroValue 0 <V> -> optional_type(<V>)
optional.unwrap optional_unwrap 0 list(optional_type(<V>)) -> list(<V>)
or optional_or_optional 1 optional_type(<V>);optional_type(<V>) -> optional_type(<V>)
orValue optional_orValue_value 1 optional_type(<V>);<V> -> <V>
patch semver_patch 1 kubernetes.Semver -> int
path authorizer_path 1 kubernetes.authorization.Authorizer;string -> kubernetes.authorization.PathCheck
prefixLength cidr_prefix_length 1 net.CIDR -> int
quantity string_to_quantity 0 string -> kubernetes.Quantity
reason decision_reason 1 kubernetes.authorization.Decision -> string
replace string_replace_string_string 1 string;string;string -> string
replace string_replace_string_string_int 1 string;string;string;int -> string
resource groupcheck_resource 1 kubernetes.authorization.GroupCheck;string -> kubernetes.authorization.ResourceCheck
reverse list_reverse 1 list(<T>) -> list(<T>)
semver string_bool_to_semver 0 string;bool -> kubernetes.Semver
semver string_to_semver 0 string -> kubernetes.Semver
serviceAccount authorizer_serviceaccount 1 kubernetes.authorization.Authorizer;string;string -> kubernetes.authorization.Authorizer
sets.contains list_sets_contains_list 0 list(<T>);list(<T>) -> bool
sets.equivalent list_sets_equivalent_list 0 list(<T>);list(<T>) -> bool
sets.intersects list_sets_intersects_list 0 list(<T>);list(<T>) -> bool
sign quantity_sign 0 kubernetes.Quantity -> int
size bytes_size 1 bytes -> int
size list_size 1 list(<A>) -> int
size map_size 1 map(<A>, <B>) -> int
size size_bytes 0 bytes -> int
size size_list 0 list(<A>) -> int
size size_map 0 map(<A>, <B>) -> int
size size_string 0 string -> int
size string_size 1 string -> int
slice list_slice 1 list(<T>);int;int -> list(<T>)
sort list_bool_sort 1 list(bool) -> list(bool)
sort list_bytes_sort 1 list(bytes) -> list(bytes)
sort list_double_sort 1 list(double) -> list(double)
sort list_google.protobuf.Duration_sort 1 list(google.protobuf.Duration) -> list(google.protobuf.Duration)
sort list_google.protobuf.Timestamp_sort 1 list(google.protobuf.Timestamp) -> list(google.protobuf.Timestamp)
sort list_int_sort 1 list(int) -> list(int)
sort list_string_sort 1 list(string) -> list(string)
sort list_uint_sort 1 list(uint) -> list(uint)
split string_split_string 1 string;string -> list(string)
split string_split_string_int 1 string;string;int -> list(string)
startsWith starts_with_string 1 string;string -> bool
string bool_to_string 0 bool -> string
string bytes_to_string 0 bytes -> string
string cidr_to_string 0 net.CIDR -> string
string double_to_string 0 double -> string
string duration_to_string 0 google.protobuf.Duration -> string
string int64_to_string 0 int -> string
string ip_to_string 0 net.IP -> string
string string_to_string 0 string -> string
string timestamp_to_string 0 google.protobuf.Timestamp -> string
string uint64_to_string 0 uint -> string
strings.quote strings_quote 0 string -> string
sub quantity_sub 1 kubernetes.Quantity;kubernetes.Quantity -> kubernetes.Quantity
sub quantity_sub_int 1 kubernetes.Quantity;int -> kubernetes.Quantity
subresource resourcecheck_subresource 1 kubernetes.authorization.ResourceCheck;string -> kubernetes.authorization.ResourceCheck
substring string_substring_int 1 string;int -> string
substring string_substring_int_int 1 string;int;int -> string
sum list_double_sum_double 1 list(double) -> double
sum list_duration_sum_duration 1 list(google.protobuf.Duration) -> google.protobuf.Duration
sum list_int_sum_int 1 list(int) -> int
sum list_uint_sum_uint 1 list(uint) -> uint
timestamp int64_to_timestamp 0 int -> google.protobuf.Timestamp
timestamp string_to_timestamp 0 string -> google.protobuf.Timestamp
timestamp timestamp_to_timestamp 0 google.protobuf.Timestamp -> google.protobuf.Timestamp
trim string_trim 1 string -> string
type type 0 <A> -> type(<A>)
uint double_to_uint64 0 double -> uint
uint int64_to_uint64 0 int -> uint
uint string_to_uint64 0 string -> uint
uint uint64_to_uint64 0 uint -> uint
unwrapOpt optional_unwrapOpt 1 list(optional_type(<V>)) -> list(<V>)
upperAscii string_upper_ascii 1 string -> string
url string_to_url 0 string -> kubernetes.URL
validate format-validate 1 kubernetes.NamedFormat;string -> optional_type(list(string))
value optional_value 1 optional_type(<V>) -> <V>
"""

#: (name, argument count, receiver style): the parser expands these (``_cel_parse``).
MACROS = frozenset({
    ("all", 2, True),
    ("all", 3, True),
    ("exists", 2, True),
    ("exists", 3, True),
    ("existsOne", 3, True),
    ("exists_one", 2, True),
    ("exists_one", 3, True),
    ("filter", 2, True),
    ("has", 1, False),
    ("map", 2, True),
    ("map", 3, True),
    ("optFlatMap", 2, True),
    ("optMap", 2, True),
    ("sortBy", 2, True),
    ("transformList", 3, True),
    ("transformList", 4, True),
    ("transformMap", 3, True),
    ("transformMap", 4, True),
    ("transformMapEntry", 3, True),
    ("transformMapEntry", 4, True),
})
