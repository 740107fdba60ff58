package store

import "github.com/IBM/sarama"

// describeTopicConfig returns the entries of one resource's configuration, failing with the resource's own
// error code (a *sarama.DescribeConfigError) as sarama's deprecated ClusterAdmin.DescribeConfig did.
func describeTopicConfig(admin sarama.ClusterAdmin, resource sarama.ConfigResource) ([]sarama.ConfigEntry, error) {
	results, err := admin.DescribeConfigs([]*sarama.ConfigResource{&resource}, sarama.DescribeConfigsOptions{})
	if err != nil {
		return nil, err
	}
	var entries []sarama.ConfigEntry
	for _, r := range results {
		if r.Name != resource.Name {
			continue
		}
		if r.ErrorCode != 0 {
			return nil, &sarama.DescribeConfigError{Err: r.ErrorCode, ErrMsg: r.ErrorMsg}
		}
		entries = append(entries, r.Configs...)
	}
	return entries, nil
}
